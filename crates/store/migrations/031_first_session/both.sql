-- Level 0's and 1's velocity numbers raised (issue 46, docs/limits.md): a new
-- buyer trying the shop reached level 0's 10 purchases an hour within four
-- minutes of an ordinary first session and was held. Only a level still at
-- the shipped number changes: an owner's own choice is kept.
UPDATE kyc_levels SET account_hourly_count = 30 WHERE level = 0 AND account_hourly_count = 10;
UPDATE kyc_levels SET recipient_hourly_count = 10 WHERE level = 0 AND recipient_hourly_count = 5;
UPDATE kyc_levels SET account_hourly_count = 60 WHERE level = 1 AND account_hourly_count = 30;
UPDATE kyc_levels SET recipient_hourly_count = 20 WHERE level = 1 AND recipient_hourly_count = 10;
