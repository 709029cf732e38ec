-- The first fixed limit (not a velocity rule) a purchase of p_amount would
-- pass under l, as crate::limits::fixed_refusal: f_name NULL when none.
CREATE FUNCTION billpay_fixed_refusal(
    l kyc_levels, p_amount BIGINT, day_value BIGINT, day_count BIGINT,
    month_value BIGINT, month_count BIGINT, to_recipient BIGINT,
    OUT f_name TEXT, OUT f_limit BIGINT, OUT f_used BIGINT)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF l.max_purchase IS NOT NULL AND p_amount > l.max_purchase THEN
        f_name := 'max_purchase'; f_limit := l.max_purchase; f_used := 0;
    ELSIF l.daily_value IS NOT NULL AND day_value + p_amount > l.daily_value THEN
        f_name := 'daily_value'; f_limit := l.daily_value; f_used := day_value;
    ELSIF l.daily_count IS NOT NULL AND day_count + 1 > l.daily_count THEN
        f_name := 'daily_count'; f_limit := l.daily_count; f_used := day_count;
    ELSIF l.monthly_value IS NOT NULL AND month_value + p_amount > l.monthly_value THEN
        f_name := 'monthly_value'; f_limit := l.monthly_value; f_used := month_value;
    ELSIF l.monthly_count IS NOT NULL AND month_count + 1 > l.monthly_count THEN
        f_name := 'monthly_count'; f_limit := l.monthly_count; f_used := month_count;
    ELSIF l.per_recipient_daily IS NOT NULL AND to_recipient + p_amount > l.per_recipient_daily THEN
        f_name := 'per_recipient_daily'; f_limit := l.per_recipient_daily; f_used := to_recipient;
    END IF;
END
$$;

-- billpay_place_limited_purchase (migration 022_limits, kept for a node
-- of the previous release during a rolling upgrade) with the velocity rules
-- and the hold for review: the same checks as crate::limits::LimitState::decide,
-- in the same order, under the wallet's row lock, reading only what applies
-- (this hour's counts only under an hourly rule, a new account's first-day
-- spending only under a first-day cap). A held purchase is debited and
-- recorded with held_for set and next_attempt_at at p_held_until, so no
-- fulfilment claim takes it. p_hour: the clock hour; p_new_since: 24 h ago;
-- p_yesterday: the Lagos day before p_day.
CREATE FUNCTION billpay_place_reviewed_purchase(
    p_code TEXT, p_account TEXT, p_key TEXT, p_reference TEXT, p_product TEXT,
    p_provider TEXT, p_plan TEXT, p_label TEXT, p_recipient TEXT, p_amount BIGINT,
    p_details TEXT, p_batch TEXT, p_now_ms BIGINT, p_now TEXT,
    p_face_value BIGINT, p_tier TEXT, p_day TEXT, p_month_from TEXT,
    p_hour BIGINT, p_new_since TEXT, p_yesterday TEXT, p_held_until BIGINT,
    OUT outcome TEXT, OUT before_kobo BIGINT, OUT after_kobo BIGINT,
    OUT limit_name TEXT, OUT limit_value BIGINT, OUT used BIGINT, OUT held BOOLEAN,
    OUT held_for TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    lim kyc_levels%ROWTYPE;
    own kyc_levels%ROWTYPE;
    day_value BIGINT := 0; day_count BIGINT := 0;
    month_value BIGINT := 0; month_count BIGINT := 0;
    to_recipient BIGINT := 0;
    recipient_hour BIGINT := 0; account_hour BIGINT := 0; first_day BIGINT := 0;
    new_account BOOLEAN;
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
            COALESCE(o.per_recipient_daily, k.per_recipient_daily),
            COALESCE(o.recipient_hourly_count, k.recipient_hourly_count),
            COALESCE(o.account_hourly_count, k.account_hourly_count),
            COALESCE(o.first_day_value, k.first_day_value),
            COALESCE(o.recipient_hourly_action, k.recipient_hourly_action),
            COALESCE(o.account_hourly_action, k.account_hourly_action),
            COALESCE(o.first_day_action, k.first_day_action),
            COALESCE(o.over_balance_action, k.over_balance_action),
            a.created_at > p_new_since
        INTO before_kobo, lim.level, lim.name, lim.max_purchase, lim.daily_value,
            lim.daily_count, lim.monthly_value, lim.monthly_count, lim.max_balance,
            lim.per_recipient_daily, lim.recipient_hourly_count, lim.account_hourly_count,
            lim.first_day_value, lim.recipient_hourly_action, lim.account_hourly_action,
            lim.first_day_action, lim.over_balance_action, new_account
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
    own := lim;
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
    IF lim.per_recipient_daily IS NOT NULL OR (held AND own.per_recipient_daily IS NOT NULL) THEN
        SELECT COALESCE(MAX(r.value), 0) INTO to_recipient FROM recipient_usage r
            WHERE r.account_id = p_account AND r.recipient = p_recipient AND r.day = p_day;
    END IF;
    IF lim.recipient_hourly_count IS NOT NULL OR lim.account_hourly_count IS NOT NULL THEN
        SELECT COALESCE(MAX(h.count) FILTER (WHERE h.recipient = p_recipient), 0),
                COALESCE(MAX(h.count) FILTER (WHERE h.recipient = ''), 0)
            INTO recipient_hour, account_hour FROM hourly_usage h
            WHERE h.account_id = p_account AND h.hour = p_hour AND h.recipient IN (p_recipient, '');
    END IF;
    IF lim.first_day_value IS NOT NULL AND new_account THEN
        SELECT COALESCE(SUM(u.value), 0) INTO first_day FROM limit_usage u
            WHERE u.account_id = p_account AND u.day >= p_yesterday;
    END IF;
    -- The fixed limits (crate::limits::fixed_refusal), against level 0's
    -- while over the largest balance: refused, or held when the account's
    -- over_balance_action says so and its own limits pass.
    outcome := 'limit';
    SELECT f.f_name, f.f_limit, f.f_used INTO limit_name, limit_value, used
        FROM billpay_fixed_refusal(lim, p_amount, day_value, day_count, month_value,
            month_count, to_recipient) f;
    IF limit_name IS NOT NULL THEN
        IF NOT held OR own.over_balance_action <> 'hold' THEN
            RETURN;
        END IF;
        IF own.monthly_value IS NOT NULL OR own.monthly_count IS NOT NULL THEN
            SELECT COALESCE(SUM(u.value), 0), COALESCE(SUM(u.count), 0)
                INTO month_value, month_count
                FROM limit_usage u WHERE u.account_id = p_account AND u.day >= p_month_from;
        END IF;
        SELECT f.f_name, f.f_limit, f.f_used INTO limit_name, limit_value, used
            FROM billpay_fixed_refusal(own, p_amount, day_value, day_count, month_value,
                month_count, to_recipient) f;
        IF limit_name IS NOT NULL THEN
            held := FALSE;
            RETURN;
        END IF;
        held_for := 'max_balance';
    END IF;
    -- The velocity rules (crate::limits::LimitState::velocity): a refusing
    -- rule refuses, a holding one holds (the first one tripped is named).
    IF lim.recipient_hourly_count IS NOT NULL AND recipient_hour + 1 > lim.recipient_hourly_count THEN
        IF lim.recipient_hourly_action = 'refuse' THEN
            limit_name := 'recipient_hourly_count'; limit_value := lim.recipient_hourly_count;
            used := recipient_hour; held_for := NULL; RETURN;
        END IF;
        held_for := COALESCE(held_for, 'recipient_hourly_count');
    END IF;
    IF lim.account_hourly_count IS NOT NULL AND account_hour + 1 > lim.account_hourly_count THEN
        IF lim.account_hourly_action = 'refuse' THEN
            limit_name := 'account_hourly_count'; limit_value := lim.account_hourly_count;
            used := account_hour; held_for := NULL; RETURN;
        END IF;
        held_for := COALESCE(held_for, 'account_hourly_count');
    END IF;
    IF lim.first_day_value IS NOT NULL AND new_account AND first_day + p_amount > lim.first_day_value THEN
        IF lim.first_day_action = 'refuse' THEN
            limit_name := 'first_day_value'; limit_value := lim.first_day_value;
            used := first_day; held_for := NULL; RETURN;
        END IF;
        held_for := COALESCE(held_for, 'first_day_value');
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
            balance_after, next_attempt_at, created_at, face_value, tier, held_for)
        VALUES (p_code, p_account, p_key, p_reference, p_product, p_provider, p_plan,
            p_label, p_recipient, p_amount, p_details, p_batch, 'processing',
            'Transaction is processing', before_kobo, after_kobo,
            CASE WHEN held_for IS NULL THEN p_now_ms ELSE p_held_until END, p_now,
            p_face_value, p_tier, held_for)
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
    IF lim.recipient_hourly_count IS NOT NULL THEN
        INSERT INTO hourly_usage AS h (account_id, recipient, hour, count)
            VALUES (p_account, p_recipient, p_hour, 1)
            ON CONFLICT (account_id, recipient, hour) DO UPDATE SET count = h.count + 1;
    END IF;
    IF lim.account_hourly_count IS NOT NULL THEN
        INSERT INTO hourly_usage AS h (account_id, recipient, hour, count)
            VALUES (p_account, '', p_hour, 1)
            ON CONFLICT (account_id, recipient, hour) DO UPDATE SET count = h.count + 1;
    END IF;
    outcome := 'ok';
END
$$;
