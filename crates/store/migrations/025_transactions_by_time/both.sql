-- The operator's list of every purchase, newest first (the console's
-- transactions page, `billpay transactions list`): read through this index,
-- a page at a time, instead of every row sorted (about 120 ms at a million
-- purchases). Each purchase appends at its right edge.
CREATE INDEX transactions_created ON transactions (created_at);
