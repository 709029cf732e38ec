-- The operator's list of every purchase, newest first (the console's
-- transactions page, `billpay transactions list`): read through this index,
-- a page at a time, instead of every row sorted (1.7 to 2 s for the first page
-- at a million purchases). Each purchase appends at its right edge.
CREATE INDEX transactions_created ON transactions (created_at);
