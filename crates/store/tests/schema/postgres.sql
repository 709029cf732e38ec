-- A PostgreSQL database's schema (schema public), for tests/migrations.rs
-- (and by hand: `psql -qAt -f postgres.sql URL`): columns, constraints,
-- indexes, functions, triggers, sequences, views, relations and types.
-- One query per statement, text only.
SELECT 'column', table_name::text, ordinal_position::text, column_name::text, data_type::text,
       column_default::text, is_nullable::text, collation_name::text, is_identity::text
    FROM information_schema.columns WHERE table_schema = 'public'
    ORDER BY table_name, ordinal_position;
SELECT 'constraint', conrelid::regclass::text, conname::text, contype::text, pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 2, 3;
SELECT 'index', tablename::text, indexname::text, indexdef FROM pg_indexes
    WHERE schemaname = 'public' ORDER BY 2, 3;
SELECT 'function', p.proname::text, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid)
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY 2, 3;
SELECT 'trigger', tgrelid::regclass::text, tgname::text, pg_get_triggerdef(oid)
    FROM pg_trigger WHERE NOT tgisinternal ORDER BY 2, 3;
SELECT 'sequence', sequence_name::text, data_type::text, start_value::text, increment::text
    FROM information_schema.sequences WHERE sequence_schema = 'public' ORDER BY 2;
SELECT 'view', table_name::text, view_definition::text FROM information_schema.views
    WHERE table_schema = 'public' ORDER BY 2;
SELECT 'relation', relname::text, relkind::text, relpersistence::text FROM pg_class
    WHERE relnamespace = 'public'::regnamespace ORDER BY 2;
