-- A transaction's ledger entries by its code: the audit's debited_once check
-- looks up each purchase's debit here (without it, SQLite read every debit
-- for every purchase: quadratic), as does `ledger_for_transaction`. Credits
-- have no code, so they stay out of the index.
CREATE INDEX ledger_transaction ON ledger (transaction_code, kind)
    WHERE transaction_code IS NOT NULL;
