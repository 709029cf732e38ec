-- billpay_place_priced_purchase with the blocklist and the limits, checked
-- under the wallet's row lock (which orders every debit of one account, so
-- usage read here cannot be raced) and the usage added in the same
-- transaction. The same checks as crate::limits::LimitState::refusal, in
-- the same order, reading as little as areas/limits.rs does: the 30-day sums
-- only when a 30-day limit applies, the recipient's usage (read and kept)
-- only when a per-recipient limit does, level 0's limits only when the
-- wallet is over its largest balance. The store contract tests hold both
-- engines to the same answers.
-- p_day: the Lagos day; p_month_from: the 30-day window's first day.
CREATE FUNCTION billpay_place_limited_purchase(
    p_code TEXT, p_account TEXT, p_key TEXT, p_reference TEXT, p_product TEXT,
    p_provider TEXT, p_plan TEXT, p_label TEXT, p_recipient TEXT, p_amount BIGINT,
    p_details TEXT, p_batch TEXT, p_now_ms BIGINT, p_now TEXT,
    p_face_value BIGINT, p_tier TEXT, p_day TEXT, p_month_from TEXT,
    OUT outcome TEXT, OUT before_kobo BIGINT, OUT after_kobo BIGINT,
    OUT limit_name TEXT, OUT limit_value BIGINT, OUT used BIGINT, OUT held BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
    lim kyc_levels%ROWTYPE;
    day_value BIGINT := 0; day_count BIGINT := 0;
    month_value BIGINT := 0; month_count BIGINT := 0;
    to_recipient BIGINT := 0;
BEGIN
    held := FALSE;
    -- The wallet (locked) and its limits: its level's under its own. Usage
    -- is read by the statements after this one: under READ COMMITTED each
    -- takes its snapshot after the lock is held, so it sees every earlier
    -- purchase of the account (a row joined here would be the one seen
    -- before waiting for the lock).
    SELECT a.balance, k.level, k.name,
            COALESCE(o.max_purchase, k.max_purchase), COALESCE(o.daily_value, k.daily_value),
            COALESCE(o.daily_count, k.daily_count), COALESCE(o.monthly_value, k.monthly_value),
            COALESCE(o.monthly_count, k.monthly_count), COALESCE(o.max_balance, k.max_balance),
            COALESCE(o.per_recipient_daily, k.per_recipient_daily)
        INTO before_kobo, lim.level, lim.name, lim.max_purchase, lim.daily_value,
            lim.daily_count, lim.monthly_value, lim.monthly_count, lim.max_balance,
            lim.per_recipient_daily
        FROM accounts a
        JOIN kyc_levels k ON k.level = a.kyc_level
        LEFT JOIN account_limits o ON o.account_id = a.id
        WHERE a.id = p_account
        FOR UPDATE OF a;
    IF NOT FOUND THEN
        outcome := 'no_account';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = p_account AND t.reference = p_reference) THEN
        outcome := 'duplicate';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'account' AND b.value = p_account)
        OR EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'recipient' AND b.value = p_recipient) THEN
        outcome := 'blocked';
        RETURN;
    END IF;
    IF lim.max_balance IS NOT NULL AND before_kobo > lim.max_balance THEN
        held := TRUE;
        SELECT * INTO lim FROM kyc_levels k WHERE k.level = 0;
    END IF;
    IF lim.monthly_value IS NOT NULL OR lim.monthly_count IS NOT NULL THEN
        SELECT COALESCE(SUM(CASE WHEN u.day = p_day THEN u.value ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN u.day = p_day THEN u.count ELSE 0 END), 0),
                COALESCE(SUM(u.value), 0), COALESCE(SUM(u.count), 0)
            INTO day_value, day_count, month_value, month_count
            FROM limit_usage u WHERE u.account_id = p_account AND u.day >= p_month_from;
    ELSE
        SELECT COALESCE(MAX(u.value), 0), COALESCE(MAX(u.count), 0) INTO day_value, day_count
            FROM limit_usage u WHERE u.account_id = p_account AND u.day = p_day;
    END IF;
    IF lim.per_recipient_daily IS NOT NULL THEN
        SELECT COALESCE(MAX(r.value), 0) INTO to_recipient FROM recipient_usage r
            WHERE r.account_id = p_account AND r.recipient = p_recipient AND r.day = p_day;
    END IF;
    outcome := 'limit';
    IF lim.max_purchase IS NOT NULL AND p_amount > lim.max_purchase THEN
        limit_name := 'max_purchase'; limit_value := lim.max_purchase; used := 0; RETURN;
    ELSIF lim.daily_value IS NOT NULL AND day_value + p_amount > lim.daily_value THEN
        limit_name := 'daily_value'; limit_value := lim.daily_value; used := day_value; RETURN;
    ELSIF lim.daily_count IS NOT NULL AND day_count + 1 > lim.daily_count THEN
        limit_name := 'daily_count'; limit_value := lim.daily_count; used := day_count; RETURN;
    ELSIF lim.monthly_value IS NOT NULL AND month_value + p_amount > lim.monthly_value THEN
        limit_name := 'monthly_value'; limit_value := lim.monthly_value; used := month_value; RETURN;
    ELSIF lim.monthly_count IS NOT NULL AND month_count + 1 > lim.monthly_count THEN
        limit_name := 'monthly_count'; limit_value := lim.monthly_count; used := month_count; RETURN;
    ELSIF lim.per_recipient_daily IS NOT NULL AND to_recipient + p_amount > lim.per_recipient_daily THEN
        limit_name := 'per_recipient_daily'; limit_value := lim.per_recipient_daily;
        used := to_recipient; RETURN;
    END IF;
    outcome := NULL;
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
    INSERT INTO limit_usage AS u (account_id, day, value, count) VALUES (p_account, p_day, p_amount, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET value = u.value + p_amount, count = u.count + 1;
    IF lim.per_recipient_daily IS NOT NULL THEN
        INSERT INTO recipient_usage AS r (account_id, recipient, day, value)
            VALUES (p_account, p_recipient, p_day, p_amount)
            ON CONFLICT (account_id, recipient, day) DO UPDATE SET value = r.value + p_amount;
    END IF;
    outcome := 'ok';
END
$$;
