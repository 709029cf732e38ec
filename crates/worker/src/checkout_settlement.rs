//! Pay now through a gateway's hosted checkout (Paystack Checkout: card,
//! USSD, bank). A checkout is stored (whose, how much, the fee agreed) before
//! the gateway is asked to initialize it, so whatever reports its payment
//! later finds it: the customer's return, the `charge.success` webhook, or
//! the reconciler (which verifies the open checkouts). Each of them calls
//! [`Funding::take_checkout`]: the payment is verified with the gateway and
//! credited through the same funding record as a bank transfer (once per
//! gateway and reference, the payment then the fee on the ledger), so
//! whichever comes first credits it and the others find it credited.

use crate::Funding;
use crate::payment_settlement::{FundingError, Reconciled, count};
use billpay_domain::{AccountId, Kobo, Naira};
use billpay_funding::{
    CheckoutRequest, CheckoutStarted, GatewayError, NotCreditable, SharedGateway,
};
use billpay_store::{
    Checkout, CheckoutStatus, FundingEvent, FundingStatus, NewCheckout, NewFunding, StoreError,
};

/// The least a customer may fund by checkout (₦100).
pub const CHECKOUT_MIN: Kobo = Kobo(10_000);
/// The most in one checkout (₦1,000,000).
pub const CHECKOUT_MAX: Kobo = Kobo(100_000_000);
/// A checkout still unpaid this long after it was initialized (the gateway
/// says abandoned, or does not know its reference) is marked abandoned: the
/// reconciler stops asking about it. Paystack's checkout page lives far less.
pub const ABANDON_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What a checkout for an amount comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote {
    /// What the customer pays on the gateway's page.
    pub pay: Kobo,
    /// The operator's fee.
    pub fee: Kobo,
    /// What the wallet receives.
    pub credit: Kobo,
    /// The fee is added to what they pay (else taken from what they fund).
    pub surcharge: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("paying by card is not available: no gateway with a checkout is configured")]
    NotOffered,
    #[error("{0}")]
    Amount(String),
    #[error("the payment page could not be opened ({0}); nothing was charged, try again")]
    Gateway(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a checkout's payment came to when it was looked at.
#[derive(Debug, Clone)]
pub enum CheckoutOutcome {
    /// Credited, now or before (`now`: by this call).
    Credited { event: Box<FundingEvent>, now: bool },
    /// Not paid yet (the gateway's word: `abandoned`, `ongoing`…): still open.
    NotPaid(String),
    /// The gateway says it failed (or was paid in another currency): closed.
    Failed(String),
    /// Still unpaid [`ABANDON_AFTER`] on: closed as abandoned (the gateway's word).
    Abandoned(String),
    /// Not a checkout billpay initialized: nothing to do.
    NotOurs,
}

impl Funding {
    /// The gateway whose hosted checkout customers pay through.
    pub fn checkout_gateway(&self) -> Option<&SharedGateway> {
        self.gateways().iter().find(|g| g.checkout().is_some())
    }

    /// What funding `wanted` by checkout costs and credits.
    pub fn quote(&self, wanted: Kobo) -> Result<Quote, CheckoutError> {
        if wanted < CHECKOUT_MIN || wanted > CHECKOUT_MAX {
            return Err(CheckoutError::Amount(format!(
                "Enter an amount from {} to {}.",
                Naira(CHECKOUT_MIN),
                Naira(CHECKOUT_MAX)
            )));
        }
        let fee = self.inner.fee.fee(wanted);
        let surcharge = self.inner.surcharge;
        let (pay, credit) = if surcharge {
            (Kobo(wanted.0 + fee.0), wanted)
        } else {
            (wanted, Kobo(wanted.0 - fee.0))
        };
        if credit <= Kobo::ZERO {
            let why = format!(
                "The fee ({}) takes all of {}: enter more.",
                Naira(fee),
                Naira(wanted)
            );
            return Err(CheckoutError::Amount(why));
        }
        Ok(Quote {
            pay,
            fee,
            credit,
            surcharge,
        })
    }

    /// Stores a checkout for `wanted` and has the gateway initialize it:
    /// the customer is then sent to `authorization_url`.
    pub async fn start_checkout(
        &self,
        account: AccountId,
        email: &str,
        wanted: Kobo,
        callback_url: &str,
    ) -> Result<(Checkout, CheckoutStarted), CheckoutError> {
        let gateway = self.checkout_gateway().ok_or(CheckoutError::NotOffered)?;
        let hosted = gateway.checkout().ok_or(CheckoutError::NotOffered)?;
        let quote = self.quote(wanted)?;
        let new = NewCheckout {
            reference: new_reference(),
            account_id: account,
            gateway: gateway.name().to_owned(),
            amount: quote.pay,
            fee: quote.fee,
        };
        let checkout = self.inner.store.create_checkout(new).await?;
        let request = CheckoutRequest {
            reference: checkout.reference.clone(),
            email: email.to_owned(),
            amount: checkout.amount,
            callback_url: callback_url.to_owned(),
            account: account.to_string(),
        };
        match hosted.initialize(&request).await {
            Ok(started) => Ok((checkout, started)),
            Err(e) => {
                let store = &self.inner.store;
                store
                    .close_checkout(&checkout.reference, CheckoutStatus::Failed)
                    .await?;
                tracing::warn!(reference = checkout.reference, error = %e, "checkout not initialized");
                Err(CheckoutError::Gateway(e.to_string()))
            }
        }
    }

    /// Verifies a checkout's payment with its gateway and credits it once
    /// (whoever calls first: the customer's return, the webhook, the reconciler).
    pub async fn take_checkout(&self, reference: &str) -> Result<CheckoutOutcome, FundingError> {
        let store = &self.inner.store;
        let Some(checkout) = store.checkout(reference).await? else {
            return Ok(CheckoutOutcome::NotOurs);
        };
        if let Some(event) = self.credited(&checkout).await? {
            let event = Box::new(event);
            return Ok(CheckoutOutcome::Credited { event, now: false });
        }
        let unverified = |why: String| FundingError::Unverified {
            reference: reference.to_owned(),
            why,
        };
        let gateway = self
            .gateway(&checkout.gateway)
            .ok_or_else(|| unverified(format!("{} is no longer configured", checkout.gateway)))?;
        let payment = match gateway.verify(reference).await {
            Ok(payment) => payment,
            // a definite "no such transaction" (Paystack: reference not found)
            Err(e @ GatewayError::Refused(_)) if is_stale(&checkout) => {
                return self.abandon(&checkout, e.to_string()).await;
            }
            Err(e) => return Err(unverified(e.to_string())),
        };
        match payment.creditable() {
            Err(NotCreditable::NotPaid(status)) if !is_final_failure(&status) => {
                if is_stale(&checkout) {
                    return self.abandon(&checkout, status).await;
                }
                Ok(CheckoutOutcome::NotPaid(status))
            }
            Err(why) => {
                store
                    .close_checkout(reference, CheckoutStatus::Failed)
                    .await?;
                Ok(CheckoutOutcome::Failed(why.to_string()))
            }
            Ok(()) => self.credit_checkout(&checkout, payment).await,
        }
    }

    /// Closes a stale checkout as abandoned, with what the gateway said.
    async fn abandon(
        &self,
        checkout: &Checkout,
        said: String,
    ) -> Result<CheckoutOutcome, FundingError> {
        let store = &self.inner.store;
        if store
            .close_checkout(&checkout.reference, CheckoutStatus::Abandoned)
            .await?
        {
            tracing::info!(
                reference = checkout.reference,
                gateway = checkout.gateway,
                said,
                "checkout abandoned: still unpaid a day after it was opened"
            );
        }
        Ok(CheckoutOutcome::Abandoned(said))
    }

    /// Its funding event, when credited already (the checkout then closed).
    async fn credited(&self, checkout: &Checkout) -> Result<Option<FundingEvent>, StoreError> {
        let store = &self.inner.store;
        let event = store.funding_event(&checkout.reference).await?;
        let event = event.filter(|e| {
            e.gateway == checkout.gateway
                && e.gateway_reference == checkout.reference
                && e.status == FundingStatus::Credited
        });
        if event.is_some() && checkout.status == CheckoutStatus::Open {
            store
                .close_checkout(&checkout.reference, CheckoutStatus::Credited)
                .await?;
        }
        Ok(event)
    }

    /// Records a verified, paid checkout as a credited funding: what was
    /// paid, less the fee agreed when it was initialized (the fee rule's fee
    /// on what was paid, should the gateway report another amount).
    async fn credit_checkout(
        &self,
        checkout: &Checkout,
        payment: billpay_funding::Payment,
    ) -> Result<CheckoutOutcome, FundingError> {
        let fee = if payment.amount == checkout.amount {
            checkout.fee
        } else {
            tracing::warn!(
                reference = checkout.reference,
                agreed = %checkout.amount,
                paid = %payment.amount,
                "a checkout was paid another amount: the paid amount counts, with its fee"
            );
            self.inner.fee.fee(payment.amount)
        };
        let new = NewFunding {
            gateway: checkout.gateway.clone(),
            gateway_reference: checkout.reference.clone(),
            status: FundingStatus::Credited,
            account_id: Some(checkout.account_id),
            amount: payment.amount,
            fee,
            currency: Some(payment.currency.clone()),
            customer_ref: payment.customer_ref.clone(),
            account_number: None,
            payer: payment.payer.clone(),
            note: "paid by checkout, verified paid".into(),
        };
        let store = &self.inner.store;
        let recorded = store.record_funding(new).await?;
        count(&checkout.gateway, &recorded);
        store
            .close_checkout(&checkout.reference, CheckoutStatus::Credited)
            .await?;
        if recorded.credited_now {
            tracing::info!(
                reference = checkout.reference,
                account = %checkout.account_id,
                paid = %payment.amount,
                "checkout credited"
            );
        }
        Ok(CheckoutOutcome::Credited {
            event: Box::new(recorded.event),
            now: recorded.credited_now,
        })
    }

    /// Verifies the gateway's open checkouts (a customer who closed the tab,
    /// a webhook that never came); abandons those still unpaid a day on.
    pub(crate) async fn reconcile_checkouts(&self, gateway: &SharedGateway, done: &mut Reconciled) {
        if gateway.checkout().is_none() {
            return;
        }
        // every open checkout, not only the window's: one older than
        // ABANDON_AFTER is asked once more and then abandoned, so the open
        // ones stay few (the window is about the gateway's listing)
        let open = match self.inner.store.open_checkouts(gateway.name(), "").await {
            Ok(open) => open,
            Err(e) => {
                tracing::warn!(gateway = gateway.name(), error = %e, "open checkouts not read");
                return;
            }
        };
        for checkout in open {
            match self.take_checkout(&checkout.reference).await {
                Ok(CheckoutOutcome::Credited { event, now: true }) => done.credited.push(*event),
                Ok(CheckoutOutcome::Abandoned(_)) => done.abandoned.push(checkout.reference),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(gateway = gateway.name(), error = %e, "reconcile: checkout not settled")
                }
            }
        }
    }
}

/// Paystack's statuses after which a checkout will never be paid.
fn is_final_failure(status: &str) -> bool {
    matches!(status, "failed" | "reversed")
}

/// Ours, in Paystack's characters: `BPC-` and 20 random hex digits.
fn new_reference() -> String {
    format!("BPC-{}", billpay_domain::keys::random_hex(10))
}

/// Opened more than [`ABANDON_AFTER`] ago (an unreadable time: not stale).
fn is_stale(checkout: &Checkout) -> bool {
    let Some(opened) = billpay_store::clock::parse_rfc3339_ms(&checkout.created_at) else {
        return false;
    };
    let bound = i64::try_from(ABANDON_AFTER.as_millis()).unwrap_or(i64::MAX);
    billpay_store::clock::now_ms().saturating_sub(opened) > bound
}
