/*
 * idorder.c — replays DuckLake's transaction-local catalog maps to learn
 * the order in which it numbers new catalog objects at commit.
 *
 * Why this exists. DuckLake gives a transaction's new schemas, tables,
 * views and partition specs their ids from next_catalog_id only when the
 * transaction commits: first every new schema, then, per schema, every
 * table or view that has a transaction-local entry, each entry's changes
 * in the order they were made (its creation takes a table or view id, a
 * SET PARTITIONED BY a partition id). Those sets are C++ unordered_maps
 * keyed by name, so the order is the maps' iteration order: after
 * `CREATE TABLE c; ALTER TABLE c …; CREATE VIEW cv …` the view comes
 * first. The catalog rows must carry DuckLake's ids, so tarn, which
 * numbers at statement time, renumbers at commit (txn.c) in this order.
 *
 * The maps. DuckDB keys them with a case-insensitive Jenkins
 * one-at-a-time hash (32 bits: each byte, ASCII upper case folded, is
 * added as a sign-extended char). The standard library DuckLake is built
 * with (libstdc++) keeps all elements on one singly linked list, the
 * elements of one bucket (hash % bucket count) next to each other; a new
 * element goes to the front of its bucket's run, or to the front of the
 * whole list when its bucket is empty. Iteration walks that list. The map
 * starts with one bucket and grows, before the insertion that would make
 * the element count exceed the bucket count, to the next size of a fixed
 * series of primes (13, 29, 59, …), re-placing the elements in list order
 * by the same rule. Erasing unlinks an element and keeps the others'
 * order. An emptied map of a schema's entries is discarded, and a later
 * entry in that schema starts a fresh map. This model was checked against
 * libstdc++'s std::unordered_map for random insert/erase sequences.
 */
#include "lake/idorder.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bucket counts libstdc++ grows through when inserting one element at a
 * time (its prime policy, max load factor 1). */
static const size_t GROWTH[] = {13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753};
#define NGROWTH (sizeof(GROWTH) / sizeof(GROWTH[0]))

typedef struct {
    char **keys; /* in iteration order */
    uint32_t *hash;
    size_t n, cap;
    size_t nbkt;  /* 1 until the first insertion */
    int overflow; /* beyond GROWTH: the order is no longer modelled */
} hmap;

typedef struct {
    char *schema, *name; /* name NULL for a schema */
    int64_t *ids;
    size_t nids;
    int live;
    int created; /* a table or view created here (not an altered one) */
} record;

typedef struct {
    char *schema;
    hmap entries;
} entry_set;

/* A map of schema name -> map of entry names (DuckLake's new_tables,
 * new_scalar_macros, new_table_macros). */
typedef struct {
    hmap sets;
    entry_set *set;
    size_t nset;
} family;

struct lk_idorder {
    hmap schemas;     /* DuckLake's new_schemas */
    family tables;    /* new_tables: tables and views */
    family macros[2]; /* new_scalar_macros, new_table_macros */
    record *rec;
    size_t nrec;
};

uint64_t lk_idorder_hash(const char *s)
{
    uint32_t h = 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        h += (uint32_t)(int32_t)(signed char)c;
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static void hmap_clear(hmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->hash);
    memset(m, 0, sizeof(*m));
}

static long hmap_find(const hmap *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcasecmp(m->keys[i], key) == 0)
            return (long)i;
    return -1;
}

/* Links key (hash h) in front of its bucket's run, or at the list head. */
static void place(char **keys, uint32_t *hash, size_t *n, size_t nbkt, char *key, uint32_t h)
{
    size_t at = 0;
    for (size_t i = 0; i < *n; i++) {
        if (hash[i] % nbkt == h % nbkt) {
            at = i;
            break;
        }
    }
    memmove(keys + at + 1, keys + at, (*n - at) * sizeof(*keys));
    memmove(hash + at + 1, hash + at, (*n - at) * sizeof(*hash));
    keys[at] = key;
    hash[at] = h;
    (*n)++;
}

static void rehash(hmap *m, size_t nbkt)
{
    char **keys = xmalloc((m->cap ? m->cap : 1) * sizeof(*keys));
    uint32_t *hash = xmalloc((m->cap ? m->cap : 1) * sizeof(*hash));
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        place(keys, hash, &n, nbkt, m->keys[i], m->hash[i]);
    free(m->keys);
    free(m->hash);
    m->keys = keys;
    m->hash = hash;
    m->nbkt = nbkt;
}

static size_t next_size(size_t nbkt)
{
    for (size_t i = 0; i < NGROWTH; i++)
        if (GROWTH[i] > nbkt)
            return GROWTH[i];
    return 0;
}

static void hmap_insert(hmap *m, const char *key)
{
    if (hmap_find(m, key) >= 0)
        return;
    if (m->n + 1 > m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->keys = xrealloc(m->keys, m->cap * sizeof(*m->keys));
        m->hash = xrealloc(m->hash, m->cap * sizeof(*m->hash));
    }
    if (m->nbkt < 13 || m->n + 1 > m->nbkt) {
        size_t grown = next_size(m->nbkt);
        if (!grown)
            m->overflow = 1;
        else
            rehash(m, grown);
    }
    place(m->keys, m->hash, &m->n, m->nbkt ? m->nbkt : 1, xstrdup(key),
          (uint32_t)lk_idorder_hash(key));
}

static void hmap_erase(hmap *m, const char *key)
{
    long i = hmap_find(m, key);
    if (i < 0)
        return;
    free(m->keys[i]);
    memmove(m->keys + i, m->keys + i + 1, (m->n - (size_t)i - 1) * sizeof(*m->keys));
    memmove(m->hash + i, m->hash + i + 1, (m->n - (size_t)i - 1) * sizeof(*m->hash));
    m->n--;
}

void lk_idorder_simulate(const char *const *keys, size_t n, const char ***out)
{
    hmap m = {0};
    for (size_t i = 0; i < n; i++)
        hmap_insert(&m, keys[i]);
    *out = xcalloc(n ? n : 1, sizeof(**out));
    for (size_t i = 0; i < m.n; i++)
        for (size_t k = 0; k < n; k++)
            if (strcasecmp(keys[k], m.keys[i]) == 0)
                (*out)[i] = keys[k];
    hmap_clear(&m);
}

static void family_free(family *f)
{
    hmap_clear(&f->sets);
    for (size_t i = 0; i < f->nset; i++) {
        free(f->set[i].schema);
        hmap_clear(&f->set[i].entries);
    }
    free(f->set);
}

lk_idorder *lk_idorder_new(void)
{
    return xcalloc(1, sizeof(lk_idorder));
}

void lk_idorder_free(lk_idorder *o)
{
    if (!o)
        return;
    hmap_clear(&o->schemas);
    family_free(&o->tables);
    family_free(&o->macros[0]);
    family_free(&o->macros[1]);
    for (size_t i = 0; i < o->nrec; i++) {
        free(o->rec[i].schema);
        free(o->rec[i].name);
        free(o->rec[i].ids);
    }
    free(o->rec);
    free(o);
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcasecmp(a, b) == 0);
}

static record *find_record(lk_idorder *o, const char *schema, const char *name)
{
    for (size_t i = 0; i < o->nrec; i++)
        if (o->rec[i].live && same(o->rec[i].schema, schema) && same(o->rec[i].name, name))
            return &o->rec[i];
    return NULL;
}

static record *add_record(lk_idorder *o, const char *schema, const char *name)
{
    record *r = find_record(o, schema, name);
    if (r)
        return r;
    o->rec = xrealloc(o->rec, (o->nrec + 1) * sizeof(*o->rec));
    r = &o->rec[o->nrec++];
    memset(r, 0, sizeof(*r));
    r->schema = xstrdup(schema);
    r->name = name ? xstrdup(name) : NULL;
    r->live = 1;
    return r;
}

static void add_id(record *r, int64_t id)
{
    r->ids = xrealloc(r->ids, (r->nids + 1) * sizeof(*r->ids));
    r->ids[r->nids++] = id;
}

static entry_set *family_find(family *f, const char *schema)
{
    for (size_t i = 0; i < f->nset; i++)
        if (strcasecmp(f->set[i].schema, schema) == 0)
            return &f->set[i];
    return NULL;
}

/* The schema's entry map, created (and its key inserted) on first use. */
static entry_set *family_get(family *f, const char *schema)
{
    entry_set *s = family_find(f, schema);
    if (hmap_find(&f->sets, schema) < 0)
        hmap_insert(&f->sets, schema);
    if (s)
        return s;
    f->set = xrealloc(f->set, (f->nset + 1) * sizeof(*f->set));
    s = &f->set[f->nset++];
    memset(s, 0, sizeof(*s));
    s->schema = xstrdup(schema);
    return s;
}

/* Erases entry `name` of `schema`; an emptied entry map is discarded. */
static void family_erase(family *f, const char *schema, const char *name)
{
    entry_set *s = family_find(f, schema);
    if (!s || hmap_find(&s->entries, name) < 0)
        return;
    hmap_erase(&s->entries, name);
    if (s->entries.n == 0) {
        hmap_clear(&s->entries);
        hmap_erase(&f->sets, schema);
    }
}

static entry_set *find_set(lk_idorder *o, const char *schema)
{
    return family_find(&o->tables, schema);
}

static entry_set *get_set(lk_idorder *o, const char *schema)
{
    return family_get(&o->tables, schema);
}

void lk_idorder_schema_created(lk_idorder *o, const char *schema, int64_t id)
{
    hmap_insert(&o->schemas, schema);
    add_id(add_record(o, schema, NULL), id);
}

void lk_idorder_schema_dropped(lk_idorder *o, const char *schema)
{
    record *r = find_record(o, schema, NULL);
    if (!r)
        return;
    r->live = 0;
    hmap_erase(&o->schemas, schema);
    if (o->schemas.n == 0)
        hmap_clear(&o->schemas);
}

void lk_idorder_entry_touched(lk_idorder *o, const char *schema, const char *name)
{
    hmap_insert(&get_set(o, schema)->entries, name);
    add_record(o, schema, name);
}

void lk_idorder_entry_id(lk_idorder *o, const char *schema, const char *name, int64_t id)
{
    add_id(add_record(o, schema, name), id);
}

void lk_idorder_entry_renamed(lk_idorder *o, const char *schema, const char *old_name,
                              const char *new_name)
{
    entry_set *s = get_set(o, schema);
    hmap_insert(&s->entries, new_name);
    if (strcasecmp(old_name, new_name) != 0)
        hmap_erase(&s->entries, old_name);
    record *r = find_record(o, schema, old_name);
    if (!r) {
        add_record(o, schema, new_name);
        return;
    }
    free(r->name);
    r->name = xstrdup(new_name);
}

void lk_idorder_entry_dropped(lk_idorder *o, const char *schema, const char *name)
{
    record *r = find_record(o, schema, name);
    if (r)
        r->live = 0;
    family_erase(&o->tables, schema, name);
}

static void append_ids(int64_t **out, size_t *n, const record *r)
{
    if (!r || r->nids == 0) /* an altered table that took no id */
        return;
    *out = xrealloc(*out, (*n + r->nids + 1) * sizeof(**out));
    memcpy(*out + *n, r->ids, r->nids * sizeof(**out));
    *n += r->nids;
}

size_t lk_idorder_sequence(const lk_idorder *o, int64_t **out)
{
    lk_idorder *m = (lk_idorder *)o;
    size_t n = 0;
    *out = NULL;
    if (o->schemas.overflow || o->tables.sets.overflow)
        return 0;
    for (size_t i = 0; i < o->schemas.n; i++)
        append_ids(out, &n, find_record(m, o->schemas.keys[i], NULL));
    for (size_t i = 0; i < o->tables.sets.n; i++) {
        entry_set *s = find_set(m, o->tables.sets.keys[i]);
        if (!s || s->entries.overflow) {
            free(*out);
            *out = NULL;
            return 0;
        }
        for (size_t k = 0; k < s->entries.n; k++)
            append_ids(out, &n, find_record(m, s->schema, s->entries.keys[k]));
    }
    return n;
}

void lk_idorder_entry_created(lk_idorder *o, const char *schema, const char *name)
{
    add_record(o, schema, name)->created = 1;
}

/* Lists the names of `fresh` in its own (hash set) order as pointers to
 * the same names in `src`, which owns them; clears `fresh`. Returns the
 * count; *out is malloc'd. */
static size_t list_fresh_set(hmap *fresh, const hmap *src, const char ***out)
{
    *out = xcalloc(fresh->n ? fresh->n : 1, sizeof(**out));
    size_t n = 0;
    for (size_t i = 0; i < fresh->n; i++)
        for (size_t k = 0; k < src->n; k++)
            if (strcmp(src->keys[k], fresh->keys[i]) == 0) {
                (*out)[n++] = src->keys[k];
                break;
            }
    hmap_clear(fresh);
    return n;
}

/* DuckLake collects these names into a fresh hash set (or map) in the
 * iteration order of its catalog maps, then lists that set. */
size_t lk_idorder_change_schemas(const lk_idorder *o, int tables, const char ***out)
{
    lk_idorder *m = (lk_idorder *)o;
    hmap fresh = {0};
    const hmap *src = tables ? &o->tables.sets : &o->schemas;
    for (size_t i = 0; i < src->n; i++) {
        int take = !tables;
        entry_set *s = tables ? find_set(m, src->keys[i]) : NULL;
        for (size_t k = 0; s && k < s->entries.n && !take; k++) {
            record *r = find_record(m, s->schema, s->entries.keys[k]);
            take = r && r->created;
        }
        if (take)
            hmap_insert(&fresh, src->keys[i]);
    }
    return list_fresh_set(&fresh, src, out);
}

void lk_idorder_macro_created(lk_idorder *o, int is_table, const char *schema, const char *name)
{
    hmap_insert(&family_get(&o->macros[is_table != 0], schema)->entries, name);
}

void lk_idorder_macro_dropped(lk_idorder *o, int is_table, const char *schema, const char *name)
{
    family_erase(&o->macros[is_table != 0], schema, name);
}

size_t lk_idorder_macro_order(const lk_idorder *o, int is_table, const char ***schemas,
                              const char ***names)
{
    const family *f = &o->macros[is_table != 0];
    size_t n = 0, cap = 0;
    *schemas = *names = NULL;
    for (size_t i = 0; i < f->sets.n; i++) {
        entry_set *s = family_find((family *)f, f->sets.keys[i]);
        for (size_t k = 0; s && k < s->entries.n; k++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                *schemas = xrealloc(*schemas, cap * sizeof(**schemas));
                *names = xrealloc(*names, cap * sizeof(**names));
            }
            (*schemas)[n] = s->schema;
            (*names)[n++] = s->entries.keys[k];
        }
    }
    return n;
}

size_t lk_idorder_macro_change_schemas(const lk_idorder *o, int is_table, const char ***out)
{
    const hmap *src = &o->macros[is_table != 0].sets;
    hmap fresh = {0};
    for (size_t i = 0; i < src->n; i++)
        hmap_insert(&fresh, src->keys[i]);
    return list_fresh_set(&fresh, src, out);
}
