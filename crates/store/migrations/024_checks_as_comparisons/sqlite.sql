-- SQLite checks `x IN ('a', 'b', 'c')` (a list of more than two values) by
-- building a temporary B-tree of the list each time it checks a row: four of
-- them on every purchase (its transaction, its ledger entry, its final
-- status, its event). The same checks as comparisons cost none
-- (docs/decisions.md, "No temporary B-tree on a purchase's path").
--
-- A CHECK cannot be altered, so each table's stored definition is edited
-- in place, as SQLite documents for changes that leave every stored row
-- valid (https://sqlite.org/lang_altertable.html, "otheralter"): each new
-- check accepts exactly the values the old one did. RESET reloads this
-- connection's schema; the table made and dropped moves the schema's
-- version, so every other connection reads the new checks too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''active'', ''suspended'', ''revoked'')',
    'status = ''active'' OR status = ''suspended'' OR status = ''revoked''')
    WHERE type = 'table' AND name = 'api_keys';
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''processing'', ''successful'', ''failed'')',
    'status = ''processing'' OR status = ''successful'' OR status = ''failed''')
    WHERE type = 'table' AND name = 'transactions';
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''pending'', ''delivered'', ''failed'', ''skipped'')',
    'status = ''pending'' OR status = ''delivered'' OR status = ''failed'' OR status = ''skipped''')
    WHERE type = 'table' AND name = 'events';
UPDATE sqlite_schema SET sql = replace(sql, 'kind IN (''discount_percent'', ''price'', ''fee'')',
    'kind = ''discount_percent'' OR kind = ''price'' OR kind = ''fee''')
    WHERE type = 'table' AND name = 'price_rules';
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''credited'', ''unmatched'', ''rejected'', ''pending_verification'')',
    'status = ''credited'' OR status = ''unmatched'' OR status = ''rejected'' OR status = ''pending_verification''')
    WHERE type = 'table' AND name = 'funding_events';
UPDATE sqlite_schema SET sql = replace(sql, 'kind IN (''credit'', ''debit'', ''refund'', ''fee'')',
    'kind = ''credit'' OR kind = ''debit'' OR kind = ''refund'' OR kind = ''fee''')
    WHERE type = 'table' AND name = 'ledger';
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''queued'', ''sent'', ''failed'')',
    'status = ''queued'' OR status = ''sent'' OR status = ''failed''')
    WHERE type = 'table' AND name = 'notices';
UPDATE sqlite_schema SET sql = replace(sql, 'status IN (''open'', ''credited'', ''failed'', ''abandoned'')',
    'status = ''open'' OR status = ''credited'' OR status = ''failed'' OR status = ''abandoned''')
    WHERE type = 'table' AND name = 'checkouts';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_version_moved (x INTEGER);
DROP TABLE schema_version_moved;
