SELECT sku, title, category, price
FROM raw.products
