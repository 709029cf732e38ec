//! The kit's extractors in a real axum router, for a UI whose users are not
//! customers (as the operator console's will be): its own scope and cookies,
//! the sign-in redirect, CSRF forms, the form body limit and the headers.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use billpay_store::issue::session_token_hash;
use billpay_webkit::{
    CsrfForm, FORM_LIMIT, PageError, Scope, SignedIn, WebKit, WebUi, csrf_for, security_headers,
};
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const SCOPE: Scope = Scope {
    users: billpay_domain::throttle::Kind::Account,
    name: "console",
    home: "/admin",
    sign_in: "/admin/login",
    session_cookie: "billpay_operator",
    sign_in_cookie: "billpay_operator_login",
    lifetime: Duration::from_secs(3600),
};
const TOKEN: &str = "the-operators-session-token";

/// A console whose one session belongs to the operator "ada".
#[derive(Clone)]
struct Console {
    kit: Arc<WebKit>,
}

impl WebUi for Console {
    type User = String;

    fn kit(&self) -> &WebKit {
        &self.kit
    }

    async fn session_user(&self, token_hash: &str) -> Result<Option<String>, PageError> {
        Ok((token_hash == session_token_hash(TOKEN)).then(|| "ada".to_owned()))
    }
}

#[derive(Deserialize)]
struct Note {
    text: String,
}

async fn whoami(signed_in: SignedIn<String>) -> String {
    signed_in.user
}

async fn post_note(signed_in: SignedIn<String>, CsrfForm(note): CsrfForm<Note>) -> String {
    format!("{}: {}", signed_in.user, note.text)
}

async fn send(request: Request<Body>) -> (Response, String) {
    let console = Console {
        kit: Arc::new(WebKit::new(SCOPE)),
    };
    let app = Router::new()
        .route("/admin", get(whoami))
        .route("/admin/notes", post(post_note))
        .with_state(console)
        .layer(axum::middleware::map_response(security_headers));
    let response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let text = String::from_utf8_lossy(&body).into_owned();
    (Response::from_parts(parts, Body::empty()), text)
}

fn signed_in_post(body: Body) -> Request<Body> {
    Request::post("/admin/notes")
        .header(header::COOKIE, format!("billpay_operator={TOKEN}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body)
        .unwrap()
}

#[tokio::test]
async fn without_a_session_the_ui_sends_to_its_own_sign_in_page() {
    let (response, _) = send(Request::get("/admin").body(Body::empty()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "/admin/login");
    assert_eq!(response.headers()[header::X_FRAME_OPTIONS], "DENY");

    let cookie = format!("billpay_operator={TOKEN}");
    let request = Request::get("/admin").header(header::COOKIE, cookie);
    let (response, body) = send(request.body(Body::empty()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(body, "ada");
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
}

#[tokio::test]
async fn a_form_reaches_its_handler_only_with_its_sessions_proof() {
    let proof = csrf_for(TOKEN);
    let form = format!("text=hello&csrf={proof}");
    let (response, body) = send(signed_in_post(Body::from(form))).await;
    assert_eq!(
        (response.status(), body.as_str()),
        (StatusCode::OK, "ada: hello")
    );

    let another = format!("text=hello&csrf={}", csrf_for("another-session"));
    for form in ["text=hello".to_owned(), "text=hello&csrf=".into(), another] {
        let (response, body) = send(signed_in_post(Body::from(form))).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{body}");
        assert!(body.contains("Invalid or missing CSRF token"), "{body}");
    }
    let (response, _) = send(signed_in_post(Body::from(format!("csrf={proof}")))).await;
    assert_eq!(
        response.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "a field is missing"
    );
}

#[tokio::test]
async fn a_form_past_the_limit_is_refused_with_or_without_a_length() {
    let big = format!("text={}&csrf={}", "x".repeat(FORM_LIMIT), csrf_for(TOKEN));
    let (response, body) = send(signed_in_post(Body::from(big.clone()))).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body, "This form is too large (at most 16 KiB).");

    // streamed in chunks, no Content-Length: refused once past the limit
    let chunks = big
        .into_bytes()
        .chunks(1024)
        .map(Bytes::copy_from_slice)
        .collect::<Vec<_>>();
    let stream = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let (response, _) = send(signed_in_post(Body::from_stream(stream))).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let json = Request::post("/admin/notes")
        .header(header::COOKIE, format!("billpay_operator={TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{}"))
        .unwrap();
    let (response, _) = send(json).await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}
