-- Shared DuckDB macros, usable by every model.
CREATE OR REPLACE MACRO net_amount(price, quantity, discount_pct) AS
    round(price * quantity * (1 - coalesce(discount_pct, 0) / 100.0), 2);
