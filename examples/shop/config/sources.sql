-- Raw inputs: CSV files in data/, exposed as DuckDB views in schema raw.
CREATE SCHEMA IF NOT EXISTS raw;
CREATE OR REPLACE VIEW raw.customers AS
    FROM read_csv('data/customers.csv', header = true,
                  columns = {'customer_id': 'INTEGER', 'name': 'VARCHAR', 'email': 'VARCHAR',
                             'country': 'VARCHAR', 'updated_at': 'TIMESTAMP'});
CREATE OR REPLACE VIEW raw.products AS
    FROM read_csv('data/products.csv', header = true,
                  columns = {'sku': 'VARCHAR', 'title': 'VARCHAR', 'category': 'VARCHAR',
                             'price': 'DECIMAL(10,2)'});
CREATE OR REPLACE VIEW raw.orders AS
    FROM read_csv('data/orders.csv', header = true,
                  columns = {'order_id': 'INTEGER', 'customer_id': 'INTEGER', 'sku': 'VARCHAR',
                             'quantity': 'INTEGER', 'discount_pct': 'INTEGER',
                             'ordered_at': 'TIMESTAMP', 'status': 'VARCHAR'});
