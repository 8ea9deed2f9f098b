-- Order lines, one partition per day of ordered_at: a run replaces exactly
-- the days it builds (tarn run --partition 2024-06-03, or --from/--to).
-- partitioned daily column=ordered_at
-- data_test relationships customer_id -> core.dim_customers.customer_id
-- data_test tests/no_empty_orders.sql
-- tags core
SELECT order_id, customer_id, sku, category, quantity, amount, ordered_at
FROM staging.stg_orders
WHERE tarn_partition(ordered_at) = {partition}
