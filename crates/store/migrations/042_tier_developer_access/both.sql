-- Issue 46: an API tier. Developer access (the dashboard's API keys and
-- webhooks pages) comes to an account with its own switch (034) or with its
-- price tier: every account on a tier marked here is a developer's while it
-- is on it. Read with the session (`areas/sessions.rs`), never copied into
-- `accounts`, so moving an account off the tier takes it away at once.
ALTER TABLE price_tiers ADD COLUMN developer_access BOOLEAN NOT NULL DEFAULT FALSE;
