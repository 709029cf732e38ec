-- A SQLite database's schema, for tests/migrations.rs (and by hand:
-- `sqlite3 -bail FILE < sqlite.sql`): every object's statement, every
-- table's columns and foreign keys. One query per statement, text only.
SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name;
SELECT m.name, x.cid, x.name, x.type, x."notnull", x.dflt_value, x.pk, x.hidden
    FROM sqlite_master m, pragma_table_xinfo(m.name) x
    WHERE m.type = 'table' ORDER BY m.name, x.cid;
SELECT m.name, f.id, f.seq, f."table", f."from", f."to", f.on_update, f.on_delete, f."match"
    FROM sqlite_master m, pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq;
