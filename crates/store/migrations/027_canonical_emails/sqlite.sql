-- Addresses are stored in their canonical form (billpay_domain::EmailAddress:
-- trimmed, NFKC, Unicode lowercase). What SQL can do safely here: lowercase
-- the ASCII letters (SQLite's lower() folds only those), which cannot make
-- two rows one, as `NOCASE` already keeps the ASCII-folded addresses
-- unique. (The comparison is BINARY: under the column's NOCASE every row
-- would equal its lowercase.) The rest needs Unicode, so it is done in Rust
-- when `serve` starts (`AuditStore::canonicalize_emails`: a lone address
-- rewritten as it parses); accounts whose addresses are one canonical
-- address are never merged, but reported (`billpay audit`'s
-- one_account_per_address, and a warning at `serve` start).
UPDATE accounts SET email = lower(email) WHERE email <> lower(email) COLLATE BINARY;
UPDATE operators SET email = lower(email) WHERE email <> lower(email) COLLATE BINARY;
