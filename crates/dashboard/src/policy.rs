//! The operator's sign-up policy (`[signup]`) and the bounds on the forms
//! anyone may post without an account (sign-up, a new code, forgot
//! password): per client address and per email address, each at most
//! [`FORMS_PER_WINDOW`] in 15 minutes, counted in the store's throttle
//! (every node's) before anything is looked up or hashed. Together with the
//! bound on password hashing, this is the rate bound that stands in for a
//! CAPTCHA.

pub use billpay_domain::throttle::FORMS_PER_WINDOW;
use billpay_domain::throttle::{FORMS_BY_ADDRESS, FORMS_BY_EMAIL, LockedOut, key};
use billpay_store::{StoreResult, ThrottleStore};
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr};

/// Whether anyone may open an account on the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignUpMode {
    Open,
    Closed,
}

/// `[signup]`: `mode` (`BILLPAY_SIGNUP_MODE`, `--signup-mode`; unset: closed,
/// open with `serve --demo`), the `tier` new sign-ups are put on, and an
/// `invite_code` a sign-up must give when set.
#[derive(Clone, Default, Deserialize)]
#[serde(default)]
pub struct SignUpSettings {
    pub mode: Option<SignUpMode>,
    pub tier: Option<String>,
    pub invite_code: Option<String>,
}

impl std::fmt::Debug for SignUpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignUpSettings")
            .field("mode", &self.mode)
            .field("tier", &self.tier)
            .field(
                "invite_code",
                &self.invite_code.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// The policy the dashboard applies, resolved from the settings.
#[derive(Clone, Default)]
pub struct SignUpPolicy {
    pub open: bool,
    pub tier: Option<String>,
    pub invite_code: Option<String>,
}

impl SignUpSettings {
    /// The policy: `demo` opens sign-up unless the mode says otherwise.
    pub fn policy(&self, demo: bool) -> SignUpPolicy {
        let mode = self.mode.unwrap_or(if demo {
            SignUpMode::Open
        } else {
            SignUpMode::Closed
        });
        SignUpPolicy {
            open: mode == SignUpMode::Open,
            tier: self.tier.clone().filter(|t| !t.trim().is_empty()),
            invite_code: self.invite_code.clone().filter(|c| !c.trim().is_empty()),
        }
    }
}

impl SignUpPolicy {
    /// Whether `given` is the invite code (always, when none is required).
    pub fn invited(&self, given: &str) -> bool {
        use subtle::ConstantTimeEq;
        match &self.invite_code {
            None => true,
            Some(code) => {
                let given = given.trim().as_bytes();
                given.len() == code.len() && bool::from(given.ct_eq(code.as_bytes()))
            }
        }
    }
}

/// What the account-care pages need: the policy, where links point, and
/// the throttles of the open forms.
pub struct AccountCare {
    pub policy: SignUpPolicy,
    /// The dashboard's public address (`https://shop.example.com`), the
    /// start of every emailed link; never taken from a request's `Host`.
    pub public_url: String,
    pub forms: OpenForms,
}

impl AccountCare {
    pub fn new(policy: SignUpPolicy, public_url: &str) -> Self {
        AccountCare {
            policy,
            public_url: public_url.trim_end_matches('/').to_owned(),
            forms: OpenForms,
        }
    }
}

impl Default for AccountCare {
    /// Sign-up closed; links to the default listen address.
    fn default() -> Self {
        AccountCare::new(SignUpPolicy::default(), "http://127.0.0.1:8080")
    }
}

/// The bounds of the forms anyone may post (the store counts them).
#[derive(Default)]
pub struct OpenForms;

impl OpenForms {
    /// Counts one form from `client` about `email` in `throttle`; refused
    /// when either has had [`FORMS_PER_WINDOW`] in the window (the client's
    /// is counted first, and counts even when the email's refuses). Without
    /// a client address (a signed-in customer asking for their own address)
    /// only the email counts. The keys are hashes: no address in clear.
    pub async fn admit(
        &self,
        throttle: &(impl ThrottleStore + ?Sized),
        client: Option<IpAddr>,
        email: &str,
    ) -> StoreResult<Result<(), LockedOut>> {
        let now = billpay_store::clock::now_ms();
        if let Some(ip) = client {
            let address = key(&network_of(ip).to_string());
            let taken = throttle.take_throttle(FORMS_BY_ADDRESS, &address).await?;
            if let Err(locked) = taken.admitted(now) {
                return Ok(Err(locked));
            }
        }
        let taken = throttle.take_throttle(FORMS_BY_EMAIL, &key(email)).await?;
        Ok(taken.admitted(now))
    }
}

/// The client's address: the connection's peer; behind a proxy on this
/// machine or a private network (the peer is loopback or private), the
/// last address the proxy added to `X-Forwarded-For`.
pub fn client_address(peer: Option<SocketAddr>, forwarded_for: Option<&str>) -> Option<IpAddr> {
    let peer = peer?.ip();
    let proxied = match peer {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.is_unique_local(),
    };
    let forwarded = forwarded_for
        .filter(|_| proxied)
        .and_then(|list| list.rsplit(',').next())
        .and_then(|last| last.trim().parse().ok());
    Some(forwarded.unwrap_or(peer))
}

/// IPv6 clients are counted per /64 (one subscriber's block), IPv4 per address.
fn network_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let mut segments = v6.segments();
            segments[4..].fill(0);
            IpAddr::V6(segments.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_opens_sign_up_unless_the_mode_is_given() {
        let unset = SignUpSettings::default();
        assert!(!unset.policy(false).open, "closed by default");
        assert!(unset.policy(true).open, "open with --demo");
        let closed = SignUpSettings {
            mode: Some(SignUpMode::Closed),
            ..SignUpSettings::default()
        };
        assert!(!closed.policy(true).open);
    }

    #[test]
    fn an_invite_code_is_checked_exactly_when_required() {
        let policy = SignUpPolicy {
            invite_code: Some("LAGOS-2026".into()),
            ..SignUpPolicy::default()
        };
        assert!(policy.invited(" LAGOS-2026 "));
        assert!(!policy.invited("lagos-2026"));
        assert!(!policy.invited(""));
        assert!(SignUpPolicy::default().invited(""));
    }

    #[tokio::test]
    async fn five_forms_per_address_and_per_email() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = billpay_store::open(&url).await.unwrap();
        let store = store.as_ref();
        let forms = &OpenForms;
        let admit = |ip: IpAddr, email: String| async move {
            forms.admit(store, Some(ip), &email).await.unwrap()
        };
        let ip: IpAddr = "102.89.1.1".parse().unwrap();
        for i in 0..FORMS_PER_WINDOW {
            assert!(admit(ip, format!("p{i}@x.ng")).await.is_ok());
        }
        assert!(admit(ip, "other@x.ng".into()).await.is_err(), "per address");
        let other: IpAddr = "102.89.1.2".parse().unwrap();
        assert!(admit(other, "p0@x.ng".into()).await.is_ok());
        for _ in 1..FORMS_PER_WINDOW {
            let _ = admit(other, "same@x.ng".into()).await;
        }
        let third: IpAddr = "102.89.1.3".parse().unwrap();
        assert!(admit(third, "same@x.ng".into()).await.is_ok());
        assert!(
            admit(third, "SAME@x.ng".into()).await.is_err(),
            "per email, any case"
        );
    }

    #[test]
    fn a_forwarded_address_counts_only_behind_a_local_proxy() {
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let public: SocketAddr = "41.58.1.1:5000".parse().unwrap();
        let header = Some("1.2.3.4, 102.89.1.1");
        assert_eq!(
            client_address(Some(local), header),
            Some("102.89.1.1".parse().unwrap())
        );
        assert_eq!(
            client_address(Some(public), header),
            Some(public.ip()),
            "a client's own header is not believed"
        );
        let v6a: IpAddr = "2c0f:f5c0:1:2:aaaa::1".parse().unwrap();
        let v6b: IpAddr = "2c0f:f5c0:1:2:bbbb::9".parse().unwrap();
        assert_eq!(network_of(v6a), network_of(v6b));
    }
}
