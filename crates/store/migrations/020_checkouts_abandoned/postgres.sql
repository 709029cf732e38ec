-- A checkout still unpaid a day after it was initialized (the gateway says
-- abandoned, or does not know the reference) is marked `abandoned`, so the
-- reconciler stops asking about it; a payment that still comes is credited
-- and the checkout becomes `credited`.
ALTER TABLE checkouts DROP CONSTRAINT checkouts_status_check;
ALTER TABLE checkouts ADD CONSTRAINT checkouts_status_check
    CHECK (status IN ('open', 'credited', 'failed', 'abandoned'));
