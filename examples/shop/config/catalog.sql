-- The lake this project builds into: a DuckLake catalog file and a data
-- folder, both relative to the project folder. ${SHOP_LAKE} may point it
-- elsewhere (see .env).
ATTACH 'ducklake:${SHOP_LAKE:-lake.ducklake}' AS lake (DATA_PATH '${SHOP_DATA:-lake/}');
