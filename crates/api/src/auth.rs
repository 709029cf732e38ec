//! Bearer-key authentication and per-key rate limiting, as one middleware in
//! front of every `/v1` route. Keys are read through [`KeyCache`](crate::key_cache::KeyCache): a
//! suspension or revocation made anywhere (CLI included) applies within
//! [`KEY_CACHE_TTL`](crate::key_cache::KEY_CACHE_TTL) on every node. The key
//! found is admitted by the purchase operation (`Purchasing::admit`: its
//! status and its account's, then a token from its rate budget), the same
//! admission as the shop's purchases: one rule, one budget per key.

use crate::error::ApiError;
use crate::extract::Caller;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use billpay_domain::keys::hash_api_key;
use billpay_operations::purchases::Admission;
use billpay_operations::rate_limit::Decision;

pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer_token(request.headers()) else {
        return ApiError::MissingApiKey.into_response();
    };
    let key_hash = hash_api_key(token);
    let found = match state
        .keys
        .authenticate(&state.purchasing.store, &key_hash)
        .await
    {
        Ok(found) => found,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let Some(found) = found else {
        return ApiError::InvalidApiKey.into_response();
    };
    let (key, account_status) = &*found;
    let (buyer, decision) = match state.purchasing.admit(key, *account_status).await {
        Admission::Refused(refused) => return ApiError::from(refused).into_response(),
        Admission::Decided { buyer, decision } => (buyer, decision),
    };
    touch_now_and_then(&state, key, &key_hash);
    let mut response = match buyer {
        Ok(buyer) => {
            request.extensions_mut().insert(Caller::from(buyer));
            next.run(request).await
        }
        Err(refused) => ApiError::from(refused).into_response(),
    };
    set_rate_limit_headers(response.headers_mut(), &decision);
    response
}

/// `last_used_at` (shown in the dashboard) is refreshed at most once a minute
/// per key, off the request path: a write per request would cost throughput.
fn touch_now_and_then(state: &AppState, key: &billpay_store::ApiKey, key_hash: &str) {
    use billpay_store::clock::{now_ms, rfc3339};
    let minute_ago = rfc3339(now_ms() - 60_000);
    if key
        .last_used_at
        .as_deref()
        .is_none_or(|at| at < minute_ago.as_str())
    {
        state.keys.note_used(key_hash, rfc3339(now_ms()));
        let (store, id) = (state.purchasing.store.clone(), key.id);
        tokio::spawn(async move {
            if let Err(e) = store.touch_api_key(id).await {
                tracing::warn!(error = %e, "could not stamp key last use");
            }
        });
    }
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn set_rate_limit_headers(headers: &mut HeaderMap, d: &Decision) {
    headers.insert("ratelimit-limit", HeaderValue::from(d.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(d.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(d.reset_secs));
}
