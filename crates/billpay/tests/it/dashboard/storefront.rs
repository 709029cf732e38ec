//! The storefront and the brand (issue 46): `/` in a browser is the
//! business's own shop — its name, logo, colour, products with their "from"
//! prices, the data plans, how to fund, WhatsApp — with "billpay" at most in
//! the small credit (and not at all with the credit off); an API client's
//! `/` is the API's JSON as before; the shop is installable (the manifest
//! read, the service worker active in Chromium); a catalogue price changed
//! with the CLI shows on `/` at once; emails wear the logo and colour with a
//! plain-text part; the console's Brand page changes what buyers see, logged.

use super::browser::Browser;
use super::pin_reset::{mail_to, open_form, server_mailing};
use super::*;
use crate::support::smtp_sink::SmtpSink;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A small SVG logo (a green disc with a white "A").
const SVG_LOGO: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\">\
    <circle cx=\"32\" cy=\"32\" r=\"30\" fill=\"#1b5e20\"/>\
    <text x=\"32\" y=\"44\" font-size=\"34\" text-anchor=\"middle\" fill=\"#fff\" \
    font-family=\"Arial\">A</text></svg>";

/// A 2×1 PNG (one red, one blue pixel), written by hand: signature, IHDR,
/// IDAT (zlib, stored), IEND — the CRCs computed below.
fn tiny_png() -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn adler32(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &x in bytes {
            a = (a + u32::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    }
    let raw = [0u8, 255, 0, 0, 0, 0, 255]; // filter 0, RGB red, RGB blue
    let mut zlib = vec![0x78, 0x01, 0x01];
    zlib.extend((raw.len() as u16).to_le_bytes());
    zlib.extend((!(raw.len() as u16)).to_le_bytes());
    zlib.extend(raw);
    zlib.extend(adler32(&raw).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(2u32.to_be_bytes());
    ihdr.extend(1u32.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &zlib);
    chunk(&mut png, b"IEND", &[]);
    png
}

/// A server with sign-up open and the brand set: its name, `logo` (a file
/// named `logo_name` in the server's folder), a colour and a WhatsApp number.
async fn branded(logo_name: &str, logo: &[u8], more: &[(&str, &str)]) -> TestServer {
    let dir = tempfile::tempdir().unwrap().keep();
    let path = dir.join(logo_name);
    std::fs::write(&path, logo).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let mut env = vec![
        ("BILLPAY_SIGNUP_MODE", "open"),
        ("BILLPAY_BUSINESS_NAME", "Ada Data Hub"),
        ("BILLPAY_BRAND_LOGO", path.as_str()),
        ("BILLPAY_BRAND_COLOUR", "#1B5E20"),
        ("BILLPAY_SUPPORT_CONTACT", "help@adadata.ng"),
        ("BILLPAY_SUPPORT_WHATSAPP", "0803 456 7890"),
    ];
    env.extend_from_slice(more);
    TestServer::spawn_with_env(Options::default(), &env).await
}

/// `/` as a browser asks for it: the status and the HTML.
async fn storefront_html(server: &TestServer) -> (u16, String) {
    let page = reqwest::Client::new()
        .get(server.url("/"))
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .send()
        .await
        .unwrap();
    let status = page.status().as_u16();
    (status, page.text().await.unwrap())
}

/// The words a person sees on the page (the body's text, `credit` removed
/// first when asked).
async fn visible_text(b: &Browser, without_credit: bool) -> String {
    let script = if without_credit {
        "const c = document.getElementById('credit'); if (c) c.remove(); return document.body.innerText;"
    } else {
        "return document.body.innerText;"
    };
    let text = b.client.execute(script, vec![]).await.unwrap();
    text.as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_stranger_meets_the_business_own_shop_at_both_widths_and_can_install_it() {
    let server = branded("logo.svg", SVG_LOGO.as_bytes(), &[]).await;
    let browser = Browser::start().await;
    let b = &browser;
    for (width, height, suffix) in [(390, 844, "390"), (1280, 900, "1280")] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client.goto(&server.url("/")).await.unwrap();
        assert_eq!(
            b.client.title().await.unwrap(),
            "Ada Data Hub: data, airtime, electricity and TV"
        );
        assert_eq!(b.text("#brand-name").await, "Ada Data Hub");
        let logo = b.css("#logo").await.attr("src").await.unwrap();
        assert_eq!(logo.as_deref(), Some("/brand/logo.svg"));
        // the logo loaded (an image that failed has no natural width)
        let loaded = b
            .client
            .execute(
                "return document.getElementById('logo').naturalWidth > 0",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(loaded, json!(true));
        let colour = b
            .client
            .execute(
                "return getComputedStyle(document.body).getPropertyValue('--brand').trim()",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(colour, json!("#1b5e20"));
        let chat = b.css("#whatsapp").await.attr("href").await.unwrap();
        assert_eq!(chat.as_deref(), Some("https://wa.me/2348034567890"));
        assert_eq!(b.text("#support-contact").await, "help@adadata.ng");
        // every product on sale with its lowest price; the data table per network
        for tile in [
            "data",
            "airtime",
            "electricity",
            "cable",
            "exam",
            "epin",
            "betting",
        ] {
            let text = b.text(&format!("#tile-{tile}")).await;
            assert!(text.contains("from ₦"), "{tile}: {text}");
        }
        assert!(b.text("#tile-airtime").await.contains("from ₦50.00"));
        let mtn = b.text("#data-mtn").await;
        assert!(
            mtn.contains("MTN 500MB") && mtn.contains("₦400.00"),
            "{mtn}"
        );
        assert!(mtn.contains("7 days"), "{mtn}");
        b.css("#sign-up").await;
        b.css("#sign-in").await;
        let docs = b.css("#api-docs").await.attr("href").await.unwrap();
        assert_eq!(docs.as_deref(), Some("/docs"));
        b.screenshot(&format!("storefront-{suffix}")).await;
        b.fits_the_width(&format!("/ at {width} px")).await;
        // "billpay" only in the small credit
        let all = visible_text(b, false).await;
        assert!(all.contains("Powered by billpay"), "{all}");
        let rest = visible_text(b, true).await;
        assert!(!rest.to_lowercase().contains("billpay"), "{rest}");
    }

    // the sign-in page wears the brand too, and its title says the business
    b.client
        .goto(&server.url("/dashboard/login"))
        .await
        .unwrap();
    assert_eq!(b.client.title().await.unwrap(), "Sign in · Ada Data Hub");
    let rest = visible_text(b, true).await;
    assert!(!rest.to_lowercase().contains("billpay"), "{rest}");

    // installable: the manifest, and the service worker active over `/`
    b.client.goto(&server.url("/")).await.unwrap();
    let manifest: Value = reqwest::get(server.url("/manifest.webmanifest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(manifest["name"], "Ada Data Hub");
    assert_eq!(manifest["start_url"], "/dashboard");
    assert_eq!(manifest["display"], "standalone");
    assert_eq!(manifest["theme_color"], "#1b5e20");
    assert_eq!(manifest["icons"][0]["src"], "/brand/icon.svg");
    assert_eq!(manifest["icons"][0]["sizes"], "any");
    let icon = reqwest::get(server.url("/brand/icon.svg")).await.unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(
        icon.text().await.unwrap(),
        SVG_LOGO,
        "the SVG logo is the icon"
    );
    // Chromium read the manifest the page links
    let linked = b
        .client
        .execute(
            "return fetch(document.querySelector('link[rel=manifest]').href).then(r => r.json()).then(m => m.name)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(linked, json!("Ada Data Hub"));
    let scope = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             navigator.serviceWorker.ready.then(r => done([r.scope, r.active && r.active.state]));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(scope[0], json!(server.url("/")));
    assert!(
        scope[1] == json!("activated") || scope[1] == json!("activating"),
        "{scope}"
    );
    let cached = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             caches.match('/offline').then(r => r ? r.text() : '').then(t => done(t.includes('You are offline')));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        cached,
        json!(true),
        "the offline page is in the shell's cache"
    );
    browser.stop().await;
}

#[tokio::test]
async fn with_the_credit_off_billpay_is_nowhere_and_a_png_logo_makes_the_icons() {
    let server = branded(
        "logo.png",
        &tiny_png(),
        &[("BILLPAY_BRAND_CREDIT", "false")],
    )
    .await;
    let (status, html) = storefront_html(&server).await;
    assert_eq!(status, 200);
    assert!(html.contains("Ada Data Hub"), "{html}");
    assert!(!html.to_lowercase().contains("billpay"), "{html}");
    let (_, login) = (
        200,
        reqwest::get(server.url("/dashboard/login"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    assert!(!login.to_lowercase().contains("billpay"), "{login}");

    let manifest: Value = reqwest::get(server.url("/manifest.webmanifest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for (i, side) in [(0, 192u32), (1, 512)] {
        let icon = &manifest["icons"][i];
        assert_eq!(icon["sizes"], format!("{side}x{side}"));
        let src = icon["src"].as_str().unwrap();
        let png = reqwest::get(server.url(src)).await.unwrap();
        assert_eq!(png.headers()["content-type"], "image/png");
        let bytes = png.bytes().await.unwrap();
        // IHDR's width and height
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((width, height), (side, side), "{src}");
    }
    let logo = reqwest::get(server.url("/brand/logo.png")).await.unwrap();
    assert_eq!(logo.bytes().await.unwrap().as_ref(), tiny_png().as_slice());
    assert_eq!(
        reqwest::get(server.url("/brand/logo.svg"))
            .await
            .unwrap()
            .status(),
        404
    );
}

#[tokio::test]
async fn an_api_client_still_gets_the_json_index_and_a_price_change_shows_at_once() {
    let server = TestServer::spawn().await;
    let json = server.get_public_json("/").await;
    assert_eq!(
        json,
        json!({"code": 200, "status": "success", "data": {
            "docs": "/docs", "openapi": "/openapi.json", "dashboard": "/dashboard", "api": "/v1"}})
    );
    let (status, html) = storefront_html(&server).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("MTN 500MB") && html.contains("₦400.00"),
        "{html}"
    );
    assert!(!html.contains("₦377.00"));
    // well under the 60 KB budget, compressed or not
    assert!(html.len() < 60_000, "{} bytes", html.len());

    let catalogue = include_str!("../../../../../catalogue/default.toml");
    let edited = catalogue.replacen(
        "name = \"MTN 500MB\"\nprice = 400.0",
        "name = \"MTN 500MB\"\nprice = 377.0",
        1,
    );
    assert_ne!(edited, catalogue);
    let file = server.path().join("cheaper.toml");
    std::fs::write(&file, edited).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    // the catalogue cache re-checks its version each second: no longer than that
    let changed = Instant::now();
    loop {
        let (_, html) = storefront_html(&server).await;
        if html.contains("₦377.00") {
            break;
        }
        assert!(
            changed.elapsed() < Duration::from_millis(2500),
            "the new price is not on / after {:?}",
            changed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emails_wear_the_logo_and_colour_with_a_plain_part() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().unwrap().keep();
    let logo = dir.join("logo.png");
    std::fs::write(&logo, tiny_png()).unwrap();
    let env = [
        ("BILLPAY_SIGNUP_MODE", "open"),
        ("BILLPAY_BUSINESS_NAME", "Ada Data Hub"),
        ("BILLPAY_BRAND_LOGO", logo.to_str().unwrap()),
        ("BILLPAY_BRAND_COLOUR", "#1b5e20"),
        ("BILLPAY_SUPPORT_CONTACT", "help@adadata.ng"),
        ("BILLPAY_SUPPORT_WHATSAPP", "+234 803 456 7890"),
        ("BILLPAY_PUBLIC_URL", "https://shop.adadata.ng"),
    ];
    let server = server_mailing(&sink, &env).await;
    let email = format!("amaka-{}@example.com", rand_suffix());
    let applicant = [
        ("name", "Amaka Obi"),
        ("email", email.as_str()),
        ("phone", "0803 123 4567"),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
    ];
    let signed_up = open_form(&server, "/dashboard/signup", &applicant).await;
    assert!(signed_up.status().is_success(), "{}", signed_up.status());
    let mail = mail_to(&sink, &email, "Ada Data Hub verification code", 1).await;
    let html = mail[0].html.clone().expect("an HTML part");
    let text = mail[0].text.clone().expect("a plain-text part");
    assert!(html.contains("background:#1b5e20"), "{html}");
    assert!(
        html.contains("src=\"https://shop.adadata.ng/brand/logo.png\""),
        "{html}"
    );
    assert!(html.contains("https://wa.me/2348034567890"), "{html}");
    assert!(!html.to_lowercase().contains("billpay"), "{html}");
    assert!(
        text.contains("Ada Data Hub") && text.contains("help@adadata.ng"),
        "{text}"
    );
    assert!(!text.contains('<'), "the plain part is text: {text}");
}

#[tokio::test]
async fn the_console_brand_page_changes_what_buyers_see_and_is_logged() {
    use crate::console::catalogue::Console;
    use crate::console::{OWNER, SUPPORT, add_operators};
    let server = branded("logo.svg", SVG_LOGO.as_bytes(), &[]).await;
    add_operators(&server);
    let support = Console::sign_in(&server, SUPPORT).await;
    let page = support.page("/admin/brand").await;
    assert!(page.contains("Ada Data Hub"), "{page}");
    assert!(
        !page.contains("id=\"brand-save\""),
        "support reads, an owner edits"
    );
    let fields = [
        ("name", "Mama Put Data"),
        ("colour", "#AA3300"),
        ("support", "0809 000 0000"),
        ("whatsapp", ""),
    ];
    let (status, _) = support.post("/admin/brand", &fields).await;
    assert_eq!(status, 403, "support may not change the brand");

    let owner = Console::sign_in(&server, OWNER).await;
    let (status, body) = owner
        .post(
            "/admin/brand",
            &[("name", "Mama Put Data"), ("colour", "orange")],
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("#rrggbb"),
        "the refusal says the rule: {body}"
    );
    assert!(body.contains("value=\"orange\""), "what was typed is kept");
    let (status, _) = owner.post("/admin/brand", &fields).await;
    assert_eq!(status, 303);

    // within the brand cache's second, buyers see the new brand; the credit is off
    let started = Instant::now();
    let html = loop {
        let (_, html) = storefront_html(&server).await;
        if html.contains("Mama Put Data") {
            break html;
        }
        assert!(started.elapsed() < Duration::from_millis(2500), "{html}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(html.contains("--brand:#aa3300"), "{html}");
    assert!(html.contains("0809 000 0000"), "{html}");
    assert!(
        !html.contains("wa.me"),
        "the WhatsApp link is removed: {html}"
    );
    assert!(!html.contains("Ada Data Hub"));
    assert!(
        !html.to_lowercase().contains("billpay"),
        "the credit is off: {html}"
    );
    let manifest: Value = reqwest::get(server.url("/manifest.webmanifest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(manifest["name"], "Mama Put Data");
    assert_eq!(manifest["theme_color"], "#aa3300");

    let log = server.cli(&["operator", "log"]);
    let entries = log["entries"].as_array().unwrap();
    let line = entries
        .iter()
        .find(|e| e["action"] == "brand.set")
        .unwrap_or_else(|| panic!("no brand.set line: {log}"));
    assert_eq!(line["operator_email"], OWNER);
    assert!(
        line["after"].as_str().unwrap().contains("Mama Put Data"),
        "{line}"
    );
}
