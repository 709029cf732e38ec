-- Issue 46, item 2: a saved recipient keeps every field of the purchase it
-- was saved from, so it is bought again as it was (an Eko postpaid meter as
-- Eko postpaid, a bouquet as that bouquet): the provider, the product's own
-- fields as a transaction's `details` hold them (meter type, plan, phone…)
-- and, for airtime, electricity and betting, the amount. A recipient saved
-- before this step keeps its number only ('' and '{}'): its form asks again.
ALTER TABLE beneficiaries ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE beneficiaries ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
ALTER TABLE beneficiaries ADD COLUMN amount BIGINT;
