-- The last TOTP time step an operator signed in with, so a code is accepted
-- once across every node (RFC 6238 §5.2), not once per process.
ALTER TABLE operators ADD COLUMN totp_step BIGINT;
