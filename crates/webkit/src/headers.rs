//! The headers every page of a web UI is sent with, and its compiled-in assets.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// Pages load scripts and styles from their own origin only (the dashboard
/// chart legend's colour swatches are `style` attributes), post forms only to
/// it, and may not be framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; \
     connect-src 'self'; manifest-src 'self'; worker-src 'self'; form-action 'self'; \
     base-uri 'none'; frame-ancestors 'none'";

/// No page may be framed (clickjacking the buttons that revoke, suspend or
/// pay) or kept in a cache; assets keep their own caching. For
/// `axum::middleware::map_response`.
pub async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // A page may widen its own forms' targets (`with_form_targets`).
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// [`CONTENT_SECURITY_POLICY`] whose forms may also go (or be redirected)
/// to these origins (`https://checkout.paystack.com`: a payment form's 303
/// to the gateway's page). An origin that is not plain `scheme://host[:port]`
/// is left out.
pub fn with_form_targets(mut response: Response, origins: &[String]) -> Response {
    let plain = |o: &&String| {
        let rest = o
            .strip_prefix("https://")
            .or_else(|| o.strip_prefix("http://"));
        rest.is_some_and(|r| {
            !r.is_empty()
                && r.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
    };
    let targets: Vec<&str> = origins.iter().filter(plain).map(String::as_str).collect();
    if targets.is_empty() {
        return response;
    }
    let policy = CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'",
        &format!("form-action 'self' {}", targets.join(" ")),
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// Both UIs' stylesheet: layout, forms, tables, badges. A UI links it
/// first and adds its own rules in a second sheet.
pub const KIT_CSS: &str = include_str!("../assets/kit.css");

/// [`KIT_CSS`], served under a UI's own path (`/dashboard/assets/…`).
pub async fn kit_stylesheet() -> Response {
    asset("text/css", KIT_CSS).await
}

/// Both UIs' script: copy buttons and confirmations (`data-copy`,
/// `data-confirm`); every page works without it.
pub const KIT_JS: &str = include_str!("../assets/kit.js");

/// [`KIT_JS`], served under a UI's own path (`/admin/assets/…`).
pub async fn kit_script() -> Response {
    asset("text/javascript", KIT_JS).await
}

/// A stylesheet or script compiled into the binary, cached for an hour.
pub async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}
