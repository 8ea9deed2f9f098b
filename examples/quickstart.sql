-- examples/quickstart.sql — a small DuckLake lake written and read by tarn.
-- Run from the repo root (scripts/demo.sh does): build/tarn sql -f examples/quickstart.sql
-- Paths are relative to the working directory; every lake it writes opens in stock DuckDB + ducklake.

ATTACH 'ducklake:demo/meta.ducklake' AS lake (DATA_PATH 'demo/data/');

-- snapshot 1: a schema; snapshot 2: a table
CREATE SCHEMA lake.shop;
CREATE TABLE lake.shop.orders (id INTEGER, customer VARCHAR, amount DECIMAL(10, 2), status VARCHAR);

-- snapshot 3: four orders
INSERT INTO lake.shop.orders VALUES
    (1, 'ada', 12.50, 'open'),
    (2, 'bob', 7.25, 'open'),
    (3, 'cyd', 30.00, 'open'),
    (4, 'dee', 4.75, 'open');

-- snapshot 4: two of them are paid
UPDATE lake.shop.orders SET status = 'paid' WHERE id IN (1, 3);

-- snapshot 5: one is cancelled
DELETE FROM lake.shop.orders WHERE id = 4;

-- the table now
SELECT * FROM lake.shop.orders ORDER BY id;

-- the table as it was right after the insert, and after the update
SELECT * FROM lake.shop.orders AT (VERSION => 3) ORDER BY id;
SELECT status, count(*) AS orders, sum(amount) AS amount
FROM lake.shop.orders AT (VERSION => 4) GROUP BY status ORDER BY status;

-- every snapshot of the lake: what each one changed
SELECT snapshot_id, schema_version, changes::VARCHAR AS changes
FROM ducklake_snapshots('lake') ORDER BY snapshot_id;
