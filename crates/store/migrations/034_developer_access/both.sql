-- Issue 46: buyers and developers apart. The dashboard shows API keys and
-- webhooks only to an account with developer access: who turned it on
-- ('self': the customer, with their password; 'operator': the CLI or the
-- console), NULL: off (a buyer). The API itself does not read it: a key
-- works or not by its own status.
ALTER TABLE accounts ADD COLUMN developer_access TEXT
    CHECK (developer_access IN ('self', 'operator'));

-- Existing accounts keep what they had: an account the operator opened, or
-- one holding an API key other than the shop's own (the key its browser
-- purchases are placed under), is a developer's.
UPDATE accounts SET developer_access = 'operator'
 WHERE signed_up = 'operator'
    OR EXISTS (SELECT 1 FROM api_keys k
                WHERE k.account_id = accounts.id
                  AND NOT EXISTS (SELECT 1 FROM transaction_pins p
                                   WHERE p.shop_key_id = k.id));
