-- Issue 47: a purchase whose supplier's books cannot say what became of it
-- (an SME-data site whose listing shows no order, or several that match, for
-- a purchase whose answer was lost) needs the operator's review at once, not
-- only when it is older than needs_review_after: when the worker first asked
-- for that review (RFC 3339; NULL: not asked). Kept while it is processing
-- (it is still requeried); a final status takes it out of every review reading.
ALTER TABLE transactions ADD COLUMN review_requested_at TEXT;
