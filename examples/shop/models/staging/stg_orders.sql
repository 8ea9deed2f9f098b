-- One row per order line, refunds excluded, amounts computed with the
-- net_amount macro from config/macros.sql.
SELECT o.order_id,
       o.customer_id,
       o.sku,
       p.category,
       o.quantity,
       net_amount(p.price, o.quantity, o.discount_pct) AS amount,
       o.ordered_at
FROM raw.orders o
JOIN staging.stg_products p USING (sku)
WHERE o.status <> 'refunded'
