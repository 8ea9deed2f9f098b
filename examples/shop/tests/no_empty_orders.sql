-- Violations: order lines with no quantity or a negative amount.
SELECT * FROM core.fct_orders WHERE quantity <= 0 OR amount < 0
