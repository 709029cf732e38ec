-- Addresses are stored in their canonical form (billpay_domain::EmailAddress:
-- trimmed, NFKC, Unicode lowercase). What SQL can do safely here: lowercase
-- an all-ASCII address (lower() beyond ASCII follows the database's
-- collation, not Unicode's rule), which cannot make two rows one: the unique
-- indexes are on lower(email) already. The rest needs Unicode, so it is done
-- in Rust when `serve` starts (`AuditStore::canonicalize_emails`: a lone
-- address rewritten as it parses); accounts whose addresses are one
-- canonical address are never merged, but reported (`billpay audit`'s
-- one_account_per_address, and a warning at `serve` start).
UPDATE accounts SET email = lower(email)
 WHERE email <> lower(email) AND octet_length(email) = char_length(email);
UPDATE operators SET email = lower(email)
 WHERE email <> lower(email) AND octet_length(email) = char_length(email);
