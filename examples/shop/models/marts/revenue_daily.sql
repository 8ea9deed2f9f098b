-- Revenue per day and category, for the dashboard.
-- tags mart
SELECT CAST(f.ordered_at AS DATE) AS order_date,
       f.category,
       count(DISTINCT f.order_id)    AS orders,
       count(DISTINCT f.customer_id) AS customers,
       sum(f.amount)                 AS revenue
FROM core.fct_orders f
JOIN core.dim_customers c USING (customer_id)
GROUP BY ALL
ORDER BY order_date, category
