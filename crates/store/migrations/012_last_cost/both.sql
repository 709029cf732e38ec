-- Each plan's last known supplier cost (the console's prices page, the
-- below-cost check): the successful purchases with a cost, by plan and time.
CREATE INDEX transactions_last_cost ON transactions (provider, plan_id, completed_at)
    WHERE status = 'successful' AND cost IS NOT NULL AND plan_id IS NOT NULL;
