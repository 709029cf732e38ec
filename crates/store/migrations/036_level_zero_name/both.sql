-- Issue 46, item 5: level 0 is every account's first level, reached by
-- signing up with a proven email address; the phone is never checked for
-- it. The default name said "Email and phone verified": an owner who kept
-- the default now reads what is true. A name an owner chose is kept.
UPDATE kyc_levels SET name = 'Email verified'
    WHERE level = 0 AND name = 'Email and phone verified';
