-- A batch's completion is a webhook event of the outbox too
-- (`batch.completed`), whose `transaction_code` is the batch's id: an event
-- names a transaction or a batch, so the column is no longer a foreign key.
ALTER TABLE events DROP CONSTRAINT events_transaction_code_fkey;
