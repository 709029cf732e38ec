-- billpay_place_purchase with the face value and tier. A new name, so a node
-- still running the previous release keeps placing purchases during a
-- rolling upgrade.
CREATE FUNCTION billpay_place_priced_purchase(
    p_code TEXT, p_account TEXT, p_key TEXT, p_reference TEXT, p_product TEXT,
    p_provider TEXT, p_plan TEXT, p_label TEXT, p_recipient TEXT, p_amount BIGINT,
    p_details TEXT, p_batch TEXT, p_now_ms BIGINT, p_now TEXT,
    p_face_value BIGINT, p_tier TEXT,
    OUT outcome TEXT, OUT before_kobo BIGINT, OUT after_kobo BIGINT)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT a.balance INTO before_kobo FROM accounts a WHERE a.id = p_account FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'no_account';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = p_account AND t.reference = p_reference) THEN
        outcome := 'duplicate';
        RETURN;
    END IF;
    UPDATE accounts a SET balance = a.balance - p_amount
        WHERE a.id = p_account AND a.balance - p_amount >= 0
        RETURNING a.balance INTO after_kobo;
    IF NOT FOUND THEN
        outcome := 'insufficient';
        RETURN;
    END IF;
    INSERT INTO transactions (code, account_id, key_id, reference, product, provider, plan_id,
            label, recipient, amount, details, batch_id, status, message, balance_before,
            balance_after, next_attempt_at, created_at, face_value, tier)
        VALUES (p_code, p_account, p_key, p_reference, p_product, p_provider, p_plan,
            p_label, p_recipient, p_amount, p_details, p_batch, 'processing',
            'Transaction is processing', before_kobo, after_kobo, p_now_ms, p_now,
            p_face_value, p_tier)
        ON CONFLICT (account_id, reference) DO NOTHING;
    IF NOT FOUND THEN
        UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_account;
        outcome := 'duplicate';
        RETURN;
    END IF;
    INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
        VALUES (p_account, -p_amount, 'debit', after_kobo, p_code, p_now);
    outcome := 'ok';
END
$$;
