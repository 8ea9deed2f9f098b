/*
 * test_sql_lexer.c — unit tests for src/sql/lexer.c: tokens, script
 * splitting, first keywords and output kinds (the golden oracle's rules).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sql/lexer.h"
#include "tarn/error.h"

/* ---- helpers ------------------------------------------------------------ */

static sql_tokens tokenize_ok(const char *sql)
{
    sql_tokens t;
    assert_int_equal(sql_tokenize(&t, sql), 0);
    assert_int_equal(t.toks[t.n].type, SQL_TOK_EOF);
    return t;
}

static void assert_tok(const sql_tokens *t, size_t i, sql_tok_type type, const char *text)
{
    assert_true(i < t->n);
    assert_int_equal(t->toks[i].type, type);
    assert_string_equal(t->toks[i].text, text);
}

/* Every token of `sql` has type `type`; their texts are `texts` (NULL-ended). */
static void assert_all(const char *sql, sql_tok_type type, const char *const *texts)
{
    sql_tokens t = tokenize_ok(sql);
    size_t i = 0;
    for (; texts[i]; i++)
        assert_tok(&t, i, type, texts[i]);
    assert_int_equal(t.n, i);
    sql_tokens_free(&t);
}

static void assert_tokenize_error(const char *sql, const char *msg)
{
    sql_tokens t;
    assert_int_equal(sql_tokenize(&t, sql), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), msg);
    assert_null(t.toks);
    assert_int_equal(t.n, 0);
}

static sql_script split_ok(const char *sql)
{
    sql_script s;
    assert_int_equal(sql_split(&s, sql), 0);
    return s;
}

static void assert_stmt(const sql_script *s, size_t i, const char *text, int line)
{
    assert_true(i < s->n);
    assert_string_equal(s->items[i].text, text);
    assert_int_equal(s->items[i].line, line);
}

/* Splits `sql` and expects exactly one statement. */
static void assert_single(const char *sql, const char *text, int line)
{
    sql_script s = split_ok(sql);
    assert_int_equal(s.n, 1);
    assert_stmt(&s, 0, text, line);
    sql_script_free(&s);
}

static void assert_split_error(const char *sql, const char *msg)
{
    sql_script s;
    assert_int_equal(sql_split(&s, sql), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), msg);
    assert_null(s.items);
    assert_int_equal(s.n, 0);
}

static void assert_first_kw(const char *stmt, const char *kw)
{
    char buf[32];
    memset(buf, 'x', sizeof buf);
    sql_first_keyword(stmt, buf, sizeof buf);
    assert_string_equal(buf, kw);
}

/* ---- tokenizer ---------------------------------------------------------- */

static void test_tokenize_basic(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("SELECT a, 'x''y' FROM \"T\"\"1\";");
    assert_int_equal(t.n, 7);
    assert_tok(&t, 0, SQL_TOK_IDENT, "SELECT");
    assert_tok(&t, 1, SQL_TOK_IDENT, "a");
    assert_tok(&t, 2, SQL_TOK_OP, ",");
    assert_tok(&t, 3, SQL_TOK_STRING, "x'y");
    assert_tok(&t, 4, SQL_TOK_IDENT, "FROM");
    assert_tok(&t, 5, SQL_TOK_QIDENT, "T\"1");
    assert_tok(&t, 6, SQL_TOK_SEMI, ";");
    /* byte ranges cover the source spelling, quotes included */
    assert_int_equal(t.toks[3].start, 10);
    assert_int_equal(t.toks[3].len, 6);
    assert_int_equal(t.toks[5].start, 22);
    assert_int_equal(t.toks[5].len, 6);
    assert_int_equal(t.toks[7].start, 29);
    assert_int_equal(t.toks[7].len, 0);
    sql_tokens_free(&t);
}

static void test_tokenize_empty(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("  -- nothing\n /* at /* all */ */ ");
    assert_int_equal(t.n, 0);
    assert_string_equal(t.toks[0].text, "");
    sql_tokens_free(&t);
    t = tokenize_ok("");
    assert_int_equal(t.n, 0);
    sql_tokens_free(&t);
    sql_tokens_free(&t); /* freeing twice is harmless */
}

static void test_tokenize_operators(void **state)
{
    (void)state;
    static const char *const ops[] = {"::", "=>", "<>", "!=", "<=", ">=", "||", "->", "->>",
                                      "**", "//", "(",  ")",  ",",  ".",  "=",  "<",  ">",
                                      "+",  "-",  "*",  "/",  "%",  "[",  "]",  "{",  "}",
                                      ":",  "@",  "~",  "^",  "&",  "|",  NULL};
    assert_all(":: => <> != <= >= || -> ->> ** // ( ) , . = < > + - * / % [ ] { } : @ ~ ^ & |",
               SQL_TOK_OP, ops);
    /* no spaces needed: longest match first */
    sql_tokens t = tokenize_ok("x::INT->>'k'<>1");
    assert_int_equal(t.n, 7);
    assert_tok(&t, 1, SQL_TOK_OP, "::");
    assert_tok(&t, 3, SQL_TOK_OP, "->>");
    assert_tok(&t, 4, SQL_TOK_STRING, "k");
    assert_tok(&t, 5, SQL_TOK_OP, "<>");
    assert_tok(&t, 6, SQL_TOK_NUMBER, "1");
    sql_tokens_free(&t);
    /* "--" and "/" + "*" start comments, never operators */
    t = tokenize_ok("1--2\n-/**/-3");
    assert_int_equal(t.n, 4);
    assert_tok(&t, 1, SQL_TOK_OP, "-");
    assert_tok(&t, 2, SQL_TOK_OP, "-");
    assert_tok(&t, 3, SQL_TOK_NUMBER, "3");
    sql_tokens_free(&t);
}

static void test_tokenize_numbers(void **state)
{
    (void)state;
    static const char *const nums[] = {"1",     "42", "1.5",   ".5",   "1e10", "1.5E-3",
                                       "2.e+7", "3.", "1_000", "0x1F", NULL};
    assert_all("1 42 1.5 .5 1e10 1.5E-3 2.e+7 3. 1_000 0x1F", SQL_TOK_NUMBER, nums);
    /* an 'e' not followed by digits is not an exponent */
    sql_tokens t = tokenize_ok("1e x.y 1 AS e");
    assert_tok(&t, 0, SQL_TOK_NUMBER, "1");
    assert_tok(&t, 1, SQL_TOK_IDENT, "e");
    assert_tok(&t, 2, SQL_TOK_IDENT, "x");
    assert_tok(&t, 3, SQL_TOK_OP, ".");
    assert_tok(&t, 4, SQL_TOK_IDENT, "y");
    assert_tok(&t, 7, SQL_TOK_IDENT, "e");
    sql_tokens_free(&t);
}

static void test_tokenize_params(void **state)
{
    (void)state;
    static const char *const params[] = {"$1", "?", "$name", "?2", "$x_1", "$23", NULL};
    assert_all("$1 ? $name ?2 $x_1 $23", SQL_TOK_PARAM, params);
    sql_tokens t = tokenize_ok("f($1,?)");
    assert_int_equal(t.n, 6);
    assert_tok(&t, 2, SQL_TOK_PARAM, "$1");
    assert_tok(&t, 4, SQL_TOK_PARAM, "?");
    sql_tokens_free(&t);
}

static void test_tokenize_identifiers(void **state)
{
    (void)state;
    static const char *const ids[] = {"über_tbl", "a$b", "_x1", "Été", "t2$", NULL};
    assert_all("über_tbl a$b _x1 Été t2$", SQL_TOK_IDENT, ids);
    /* E'…' is a string only when the E stands alone before the quote */
    sql_tokens t = tokenize_ok("e'x' ee'y' E");
    assert_int_equal(t.n, 4);
    assert_tok(&t, 0, SQL_TOK_STRING, "x");
    assert_tok(&t, 1, SQL_TOK_IDENT, "ee");
    assert_tok(&t, 2, SQL_TOK_STRING, "y");
    assert_tok(&t, 3, SQL_TOK_IDENT, "E");
    sql_tokens_free(&t);
    t = tokenize_ok("\"\" \"a b\" \"\"\"\"");
    assert_tok(&t, 0, SQL_TOK_QIDENT, "");
    assert_tok(&t, 1, SQL_TOK_QIDENT, "a b");
    assert_tok(&t, 2, SQL_TOK_QIDENT, "\"");
    sql_tokens_free(&t);
}

static void test_tokenize_strings(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("'' 'a''b' 'it''s;'\n'two\nlines'");
    assert_tok(&t, 0, SQL_TOK_STRING, "");
    assert_tok(&t, 1, SQL_TOK_STRING, "a'b");
    assert_tok(&t, 2, SQL_TOK_STRING, "it's;");
    assert_tok(&t, 3, SQL_TOK_STRING, "two\nlines");
    /* backslashes mean nothing in standard strings */
    sql_tokens_free(&t);
    t = tokenize_ok("'a\\'");
    assert_tok(&t, 0, SQL_TOK_STRING, "a\\");
    sql_tokens_free(&t);
}

static void test_tokenize_escape_strings(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("E'a\\nb\\tc\\\\d\\'e''f' e'\\x41\\101\\u00e9\\U0001F600\\q\\x'");
    assert_int_equal(t.n, 2);
    assert_tok(&t, 0, SQL_TOK_STRING, "a\nb\tc\\d'e'f");
    assert_tok(&t, 1, SQL_TOK_STRING, "AA\xc3\xa9\xf0\x9f\x98\x80qx");
    sql_tokens_free(&t);
    /* an escaped quote does not end the string, so the ';' stays inside */
    t = tokenize_ok("E'\\';' x");
    assert_int_equal(t.n, 2);
    assert_tok(&t, 0, SQL_TOK_STRING, "';");
    sql_tokens_free(&t);
}

static void test_tokenize_dollar_quotes(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("$$a;'b$$ $tag$ x $$ y $tag2$ $tag$ $q$$q$ $ü$z$ü$");
    assert_int_equal(t.n, 4);
    assert_tok(&t, 0, SQL_TOK_STRING, "a;'b");
    assert_tok(&t, 1, SQL_TOK_STRING, " x $$ y $tag2$ ");
    assert_tok(&t, 2, SQL_TOK_STRING, "");
    assert_tok(&t, 3, SQL_TOK_STRING, "z");
    assert_int_equal(t.toks[1].start, 9);
    assert_int_equal(t.toks[1].len, 25);
    sql_tokens_free(&t);
    /* a name before '$' keeps it: a$$b$$ is one identifier */
    t = tokenize_ok("a$$b$$");
    assert_int_equal(t.n, 1);
    assert_tok(&t, 0, SQL_TOK_IDENT, "a$$b$$");
    sql_tokens_free(&t);
}

static void test_tokenize_lines(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("a\n'x\ny' b -- c\n/* d\n\n */ \"e\nf\"\n\n$$\n$$ g");
    assert_int_equal(t.n, 6);
    int lines[] = {1, 2, 3, 6, 9, 10};
    for (size_t i = 0; i < t.n; i++)
        assert_int_equal(t.toks[i].line, lines[i]);
    assert_int_equal(t.toks[t.n].line, 10);
    sql_tokens_free(&t);
    t = tokenize_ok("\r\n\r\nx");
    assert_int_equal(t.toks[0].line, 3);
    sql_tokens_free(&t);
}

static void test_tokenize_errors(void **state)
{
    (void)state;
    assert_tokenize_error("SELECT\n'abc", "line 2: unterminated string literal");
    assert_tokenize_error("SELECT 'a''", "line 1: unterminated string literal");
    assert_tokenize_error("\n\nE'abc\\'", "line 3: unterminated string literal");
    assert_tokenize_error("E'abc\\", "line 1: unterminated string literal");
    assert_tokenize_error("x\n\"ab\"\"", "line 2: unterminated quoted identifier");
    assert_tokenize_error("a /* b\n /* c */ d", "line 1: unterminated comment");
    assert_tokenize_error("a\n\n$t$ x $T$", "line 3: unterminated dollar-quoted string");
    assert_tokenize_error("$$", "line 1: unterminated dollar-quoted string");
    assert_int_equal(tarn_error_code(), TARN_EINVALID);
}

static void test_tok_is_kw(void **state)
{
    (void)state;
    sql_tokens t = tokenize_ok("select \"SELECT\" 'select' selected Select");
    assert_true(sql_tok_is_kw(&t.toks[0], "SELECT"));
    assert_true(sql_tok_is_kw(&t.toks[0], "select"));
    assert_false(sql_tok_is_kw(&t.toks[1], "SELECT"));
    assert_false(sql_tok_is_kw(&t.toks[2], "SELECT"));
    assert_false(sql_tok_is_kw(&t.toks[3], "SELECT"));
    assert_false(sql_tok_is_kw(&t.toks[0], "SELECTED"));
    assert_true(sql_tok_is_kw(&t.toks[4], "sElEcT"));
    assert_false(sql_tok_is_kw(&t.toks[5], "")); /* EOF */
    sql_tokens_free(&t);
}

/* ---- splitting ---------------------------------------------------------- */

static void test_split_basic(void **state)
{
    (void)state;
    sql_script s = split_ok("SELECT 1; SELECT 2;\nSELECT 3");
    assert_int_equal(s.n, 3);
    assert_stmt(&s, 0, "SELECT 1", 1);
    assert_stmt(&s, 1, "SELECT 2", 1);
    assert_stmt(&s, 2, "SELECT 3", 2); /* last statement without ';' */
    sql_script_free(&s);
    sql_script_free(&s); /* freeing twice is harmless */
}

static void test_split_semicolon_in_strings(void **state)
{
    (void)state;
    assert_single("SELECT 'a;b', 'it''s; ok';", "SELECT 'a;b', 'it''s; ok'", 1);
    assert_single("SELECT E'x\\';y';", "SELECT E'x\\';y'", 1);
    assert_single("SELECT $$ ; $$, $fn$ '; \" $fn$;", "SELECT $$ ; $$, $fn$ '; \" $fn$", 1);
}

static void test_split_semicolon_in_quoted_names(void **state)
{
    (void)state;
    sql_script s = split_ok("CREATE TABLE \";\" (\"a\"\";\" INT); SELECT \"\"\"\";");
    assert_int_equal(s.n, 2);
    assert_stmt(&s, 0, "CREATE TABLE \";\" (\"a\"\";\" INT)", 1);
    assert_stmt(&s, 1, "SELECT \"\"\"\"", 1);
    sql_script_free(&s);
}

static void test_split_semicolon_in_comments(void **state)
{
    (void)state;
    sql_script s = split_ok("SELECT 1 -- not; the end\n, 2; /* ; */ SELECT /* a /* ; */ b; */ 3;");
    assert_int_equal(s.n, 2);
    assert_stmt(&s, 0, "SELECT 1 -- not; the end\n, 2", 1);
    assert_stmt(&s, 1, "SELECT /* a /* ; */ b; */ 3", 2);
    sql_script_free(&s);
}

static void test_split_multiline_and_lines(void **state)
{
    (void)state;
    const char *script = "-- header; comment\n"
                         "\n"
                         "CREATE TABLE t (\n"
                         "    a INT,\n"
                         "    b VARCHAR\n"
                         ");\n"
                         "INSERT INTO t VALUES\n"
                         "  (1, 'x\n"
                         "y');  /* trailing */\n"
                         "\n"
                         "  /* lead */ SELECT * FROM t -- tail\n";
    sql_script s = split_ok(script);
    assert_int_equal(s.n, 3);
    assert_stmt(&s, 0, "CREATE TABLE t (\n    a INT,\n    b VARCHAR\n)", 3);
    assert_stmt(&s, 1, "INSERT INTO t VALUES\n  (1, 'x\ny')", 7);
    /* comments before the first and after the last token are not part of it */
    assert_stmt(&s, 2, "SELECT * FROM t", 11);
    sql_script_free(&s);
}

static void test_split_empty_statements(void **state)
{
    (void)state;
    sql_script s = split_ok(";;  ;\n-- only a comment;\n; /* c */ ;\nSELECT 1;;\n;");
    assert_int_equal(s.n, 1);
    assert_stmt(&s, 0, "SELECT 1", 4);
    sql_script_free(&s);
    static const char *const empties[] = {"", "   \n\t", ";", "-- c", "/* a */ -- b\n;;", NULL};
    for (size_t i = 0; empties[i]; i++) {
        s = split_ok(empties[i]);
        assert_int_equal(s.n, 0);
        assert_null(s.items);
        sql_script_free(&s);
    }
}

static void test_split_errors(void **state)
{
    (void)state;
    assert_split_error("SELECT 1;\nSELECT 'oops;\nSELECT 3;",
                       "line 2: unterminated string literal");
    assert_split_error("SELECT 1;\n\n\"x", "line 3: unterminated quoted identifier");
    assert_split_error("SELECT 1; /* /* */", "line 1: unterminated comment");
    assert_split_error("SELECT $a$ ;", "line 1: unterminated dollar-quoted string");
}

/* ---- first keyword ------------------------------------------------------ */

static void test_first_keyword(void **state)
{
    (void)state;
    assert_first_kw("select 1", "SELECT");
    assert_first_kw("  \n\tInsert INTO t", "INSERT");
    assert_first_kw("-- c; x\n/* a /* nested */ b */ ((  -- d\n (wItH x AS (SELECT 1) FROM x))",
                    "WITH");
    assert_first_kw("über_x", "üBER_X"); /* ASCII letters only */
    assert_first_kw("a$1b", "A$1B");
    assert_first_kw("", "");
    assert_first_kw("  -- only\n/* comments */", "");
    assert_first_kw("/* unterminated", "");
    assert_first_kw("'SELECT'", "");
    assert_first_kw("\"SELECT\"", "");
    assert_first_kw("E'x'", "");
    assert_first_kw("e", "E");
    assert_first_kw("1 SELECT", "");
    assert_first_kw("; SELECT", "");

    /* a word that does not fit gives "" rather than a truncated keyword */
    char buf[7];
    sql_first_keyword("SELECTED", buf, sizeof buf);
    assert_string_equal(buf, "");
    sql_first_keyword("SELECT", buf, sizeof buf);
    assert_string_equal(buf, "SELECT");
    char one[1] = {'x'};
    sql_first_keyword("SELECT", one, 1);
    assert_int_equal(one[0], '\0');
    sql_first_keyword("SELECT", one, 0); /* n == 0: nothing written */
}

static void test_tokenize_kw(void **state)
{
    (void)state;
    sql_tokens t;
    char kw[32];
    assert_int_equal(sql_tokenize_kw(&t, "(select 1) -- x", kw, sizeof kw), 0);
    assert_string_equal(kw, "SELECT");
    assert_int_equal(t.n, 4);
    assert_tok(&t, 1, SQL_TOK_IDENT, "select");
    sql_tokens_free(&t);
    memset(kw, 'x', sizeof kw);
    assert_int_equal(sql_tokenize_kw(&t, "SELECT 'oops", kw, sizeof kw), TARN_EINVALID);
    assert_null(t.toks);
    assert_int_equal(kw[0], 'x'); /* not set on failure */
    tarn_error_clear();
}

/* ---- output kind -------------------------------------------------------- */

static void test_output_rows(void **state)
{
    (void)state;
    static const char *const rows[] = {
        "SELECT 1",
        "select 1",
        "FROM t",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "VALUES (1)",
        "TABLE t",
        "DESCRIBE t",
        "SHOW TABLES",
        "SUMMARIZE t",
        "PIVOT t ON a USING sum(b)",
        "UNPIVOT t ON a INTO NAME k VALUE v",
        "EXPLAIN SELECT 1",
        "  -- c\nSELECT 1",
        "/* a */ -- b\n\n  /* c */SELECT 1",
        "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", /* README rule: first keyword */
        "WITH d AS (SELECT 1) DELETE FROM t",
        "SELECT1",
        "SELECT$x",
        "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE RETURNING *",
        "merge into t using s using (a) when not matched then insert returning merge_action",
        NULL};
    for (size_t i = 0; rows[i]; i++) {
        if (sql_output_kind(rows[i]) != TARN_OUTPUT_ROWS)
            fail_msg("expected ROWS: %s", rows[i]);
    }
}

static void test_output_count(void **state)
{
    (void)state;
    static const char *const counts[] = {
        "INSERT INTO t VALUES (1)",
        "insert into t select 1",
        "UPDATE t SET a = 1",
        "DELETE FROM t",
        "-- c\n/* d */ DELETE FROM t",
        "CREATE TABLE t AS SELECT 1",
        "create table t as select 1",
        "CREATE TABLE \"a.b\".\"c d\" AS SELECT 1",
        "CREATE OR REPLACE TABLE IF NOT EXISTS x AS FROM y",
        "CREATE OR REPLACE TABLE dl.s.t AS SELECT 1",
        "CREATE TABLE IF NOT EXISTS dl.c1 AS SELECT 42 AS other",
        "CREATE TABLE dl . s . \"x\"\"y\" AS SELECT 1",
        "CREATE\n  TABLE\tt\n  AS\nSELECT 1",
        "CREATE TABLE t AS(SELECT 1)",
        "CREATE TABLE t AS",
        "CREATE TABLE t$1 AS SELECT 1",
        "CREATE TABLE IF AS SELECT 1", /* a table named IF */
        "CREATE TEMP TABLE x AS SELECT 1",
        "CREATE OR REPLACE TEMPORARY TABLE x AS SELECT 1",
        "  /* c */ CREATE TABLE t AS SELECT 1",
        "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE",
        "MERGE INTO t USING s USING (a) WHEN NOT MATCHED THEN "
        "INSERT VALUES ('RETURNING')",
        NULL};
    for (size_t i = 0; counts[i]; i++)
        if (sql_output_kind(counts[i]) != TARN_OUTPUT_COUNT)
            fail_msg("expected COUNT: %s", counts[i]);
}

static void test_output_none(void **state)
{
    (void)state;
    static const char *const nones[] = {
        "CREATE TABLE t (a INT)",
        "CREATE TABLE t(a) AS SELECT 1",
        "CREATE TABLE \"x\"AS SELECT 1", /* the oracle wants whitespace before AS */
        "CREATE TABLE t ASX",
        "CREATE TABLE t AS1",
        "CREATE TABLE t AS_",
        "CREATE TABLE t ASé",
        "CREATE TABLE t . AS SELECT 1",
        "CREATE TABLE \"unterminated AS SELECT 1",
        "CREATE TABLE IF NOT EXISTS AS SELECT 1",
        "CREATE VIEW v AS SELECT 1",
        "CREATE SCHEMA s",
        "CREATE TABLE 1t AS SELECT 1",
        "CREATE /* c */ TABLE t AS SELECT 1", /* the oracle's regex allows no comments */
        "CREATE OR TABLE t AS SELECT 1",
        "CREATE TEMP TEMPORARY TABLE t AS SELECT 1",
        "CREATETABLE t AS SELECT 1",
        "ATTACH 'ducklake:meta.ducklake' AS dl",
        "DETACH dl",
        "USE dl",
        "SET TimeZone='UTC'",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "CALL ducklake_expire_snapshots('dl')",
        "DROP TABLE t",
        "ALTER TABLE t ADD COLUMN b INT",
        "COMMENT ON TABLE t IS 'x'",
        "(SELECT 1)", /* the oracle does not skip '(' */
        "'SELECT'",
        "\"SELECT\" FROM t",
        "",
        "   ",
        "-- SELECT 1",
        "/* SELECT 1",
        "SELECTED 1",
        "INSERTS",
        "select_x FROM t", /* the oracle's first word is [A-Za-z_]+ */
        NULL};
    for (size_t i = 0; nones[i]; i++)
        if (sql_output_kind(nones[i]) != TARN_OUTPUT_NONE)
            fail_msg("expected NONE: %s", nones[i]);
}

/* Leading comments are stripped the way check.py does it: block comments
 * do not nest, and the close is searched from the opener's own star. */
static void test_output_oracle_comments(void **state)
{
    (void)state;
    assert_int_equal(sql_output_kind("/* a /* b */ SELECT 1"), TARN_OUTPUT_ROWS);
    assert_int_equal(sql_output_kind("/* a /* b */ c */ SELECT 1"), TARN_OUTPUT_NONE);
    assert_int_equal(sql_output_kind("/*/ SELECT 1"), TARN_OUTPUT_ROWS);
    assert_int_equal(sql_output_kind("--x\r\nINSERT INTO t VALUES (1)"), TARN_OUTPUT_COUNT);
    assert_int_equal(sql_output_kind("-- a\n-- b\n  --c\n\tUPDATE t SET a=1"), TARN_OUTPUT_COUNT);
    assert_int_equal(sql_output_kind("\f\v SHOW TABLES"), TARN_OUTPUT_ROWS);
}

/* sql_tok_is_op / sql_tokens_is_op / sql_tokens_item_end: the items of
 * f(a, g(b, c), [d, e], {'k': 1}) end at the commas outside brackets. */
static void test_op_helpers(void **state)
{
    (void)state;
    sql_tokens t;
    assert_int_equal(sql_tokenize(&t, "f(a, g(b, c), [d, e], {'k': 1})"), 0);
    assert_true(sql_tok_is_op(&t.toks[1], "("));
    assert_false(sql_tok_is_op(&t.toks[0], "("));
    assert_true(sql_tokens_is_op(&t, t.n - 1, ")"));
    assert_false(sql_tokens_is_op(&t, t.n, ")")); /* past the end */
    size_t to = t.n - 1, i = 2, ends[4], n = 0;
    while (i < to && n < 4) {
        ends[n++] = sql_tokens_item_end(&t, i, to);
        i = ends[n - 1] + 1;
    }
    assert_int_equal(n, 4);
    assert_true(sql_tok_is_op(&t.toks[ends[0]], ","));
    assert_string_equal(t.toks[ends[0] - 1].text, "a");
    assert_string_equal(t.toks[ends[1] - 1].text, ")");
    assert_string_equal(t.toks[ends[2] - 1].text, "]");
    assert_int_equal(ends[3], to);
    sql_tokens_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenize_basic),
        cmocka_unit_test(test_tokenize_empty),
        cmocka_unit_test(test_tokenize_operators),
        cmocka_unit_test(test_tokenize_numbers),
        cmocka_unit_test(test_tokenize_params),
        cmocka_unit_test(test_tokenize_identifiers),
        cmocka_unit_test(test_tokenize_strings),
        cmocka_unit_test(test_tokenize_escape_strings),
        cmocka_unit_test(test_tokenize_dollar_quotes),
        cmocka_unit_test(test_tokenize_lines),
        cmocka_unit_test(test_tokenize_errors),
        cmocka_unit_test(test_tok_is_kw),
        cmocka_unit_test(test_split_basic),
        cmocka_unit_test(test_split_semicolon_in_strings),
        cmocka_unit_test(test_split_semicolon_in_quoted_names),
        cmocka_unit_test(test_split_semicolon_in_comments),
        cmocka_unit_test(test_split_multiline_and_lines),
        cmocka_unit_test(test_split_empty_statements),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_first_keyword),
        cmocka_unit_test(test_tokenize_kw),
        cmocka_unit_test(test_output_rows),
        cmocka_unit_test(test_output_count),
        cmocka_unit_test(test_output_none),
        cmocka_unit_test(test_output_oracle_comments),
        cmocka_unit_test(test_op_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
