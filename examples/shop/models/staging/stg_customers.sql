-- Customers with normalized emails. No annotation: replaced when it changes.
SELECT customer_id,
       name,
       lower(trim(email)) AS email,
       upper(country)     AS country,
       updated_at
FROM raw.customers
