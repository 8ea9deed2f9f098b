-- The customer dimension, merged by customer_id: customers in the SELECT
-- are replaced, customers no longer in the source are kept.
-- materialize key=customer_id
-- data_test unique customer_id
-- data_test not_null email
-- tags core
SELECT c.customer_id,
       c.name,
       c.email,
       c.country,
       min(o.ordered_at) AS first_order_at,
       count(o.order_id) AS orders
FROM staging.stg_customers c
LEFT JOIN staging.stg_orders o USING (customer_id)
GROUP BY ALL
