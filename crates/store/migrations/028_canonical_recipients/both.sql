-- One canonical form per recipient (docs/limits.md, docs/decisions.md): the
-- blocklist's recipients and the per-recipient usage rows (the day's value,
-- the hour's count) keyed as purchases now carry them: without whitespace
-- (at the ends or inside: spaces, tabs, line breaks, no-break U+00A0,
-- figure U+2007, narrow no-break U+202F, ideographic U+3000), without
-- zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and with ASCII
-- letters upper-cased ("C" collation: no other letter changes case).
-- NFKC (full-width letters and digits) is not in SQL: `recipient::canonical`
-- does it for every purchase and blocklist entry from this release on.
--
-- Each stored text and its canonical form, for those that differ.
CREATE TEMPORARY TABLE canonical_recipients (
    value     TEXT PRIMARY KEY,
    canonical TEXT NOT NULL
);
INSERT INTO canonical_recipients (value, canonical)
    SELECT value, value FROM blocklist WHERE kind = 'recipient'
    UNION SELECT recipient, recipient FROM recipient_usage
    UNION SELECT recipient, recipient FROM hourly_usage;
UPDATE canonical_recipients SET canonical = replace(canonical, chr(32), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(9), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(10), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(11), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(12), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(13), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(160), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8199), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8239), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(12288), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8203), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8204), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8205), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(8288), '');
UPDATE canonical_recipients SET canonical = replace(canonical, chr(65279), '');
UPDATE canonical_recipients SET canonical = upper(canonical COLLATE "C");
-- Unchanged, or nothing left (kept as it was: no purchase carries it).
DELETE FROM canonical_recipients WHERE canonical = value OR canonical = '';

-- Entries that become one: the one already canonical is kept, else any one
-- of them (its reason and author).
INSERT INTO blocklist (kind, value, reason, added_by, added_at)
    SELECT b.kind, c.canonical, b.reason, b.added_by, b.added_at
    FROM blocklist b JOIN canonical_recipients c ON c.value = b.value
    WHERE b.kind = 'recipient'
    ON CONFLICT (kind, value) DO NOTHING;
DELETE FROM blocklist
    WHERE kind = 'recipient' AND value IN (SELECT value FROM canonical_recipients);

-- Rows that become one recipient's: their sums.
INSERT INTO recipient_usage (account_id, recipient, day, value)
    SELECT u.account_id, c.canonical, u.day, SUM(u.value)
    FROM recipient_usage u JOIN canonical_recipients c ON c.value = u.recipient
    WHERE TRUE
    GROUP BY u.account_id, c.canonical, u.day
    ON CONFLICT (account_id, recipient, day) DO UPDATE
        SET value = recipient_usage.value + excluded.value;
DELETE FROM recipient_usage WHERE recipient IN (SELECT value FROM canonical_recipients);

INSERT INTO hourly_usage (account_id, recipient, hour, count)
    SELECT u.account_id, c.canonical, u.hour, SUM(u.count)
    FROM hourly_usage u JOIN canonical_recipients c ON c.value = u.recipient
    WHERE TRUE
    GROUP BY u.account_id, c.canonical, u.hour
    ON CONFLICT (account_id, recipient, hour) DO UPDATE
        SET count = hourly_usage.count + excluded.count;
DELETE FROM hourly_usage WHERE recipient IN (SELECT value FROM canonical_recipients);

DROP TABLE canonical_recipients;
