-- A transaction's ledger entries by its code (sqlite/005_ledger_by_transaction.sql):
-- the audit's debited_once check and `ledger_for_transaction` find a
-- purchase's debit without reading the whole ledger. Credits have no code.
CREATE INDEX ledger_transaction ON ledger (transaction_code, kind)
    WHERE transaction_code IS NOT NULL;
