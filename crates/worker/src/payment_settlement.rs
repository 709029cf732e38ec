//! Money in: what billpay does with a payment a gateway reports, whoever
//! reports it (a webhook, the reconciler, the operator's `reconcile`).
//!
//! A payment is credited only as the gateway's verify call describes it
//! (paid, in NGN, that amount), to the account that owns the reserved
//! account it was paid into, once per gateway reference (the store's
//! `record_funding`). A verify that fails is no answer: the payment is
//! recorded `pending_verification` and verified again later, never credited
//! on a guess. The reconciler lists each gateway's payments into reserved
//! accounts and settles those billpay has not credited (a lost webhook), and
//! retries the pending ones; it runs on one node at a time (a job lease).

use billpay_domain::Kobo;
use billpay_funding::{FeeRule, Payment, PaymentNotice, Reservation, SharedGateway};
use billpay_store::{
    FundingEvent, FundingFilter, FundingRecorded, FundingStatus, NewFunding, NewReservation,
    SharedStore, StoreError,
};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::Notify;

/// The job lease's name: one reconciler at a time across nodes.
const RECONCILE_JOB: &str = "funding-reconcile";
/// How far back the background reconciler looks each run.
pub const BACKGROUND_WINDOW: Duration = Duration::from_secs(24 * 3600);

#[derive(Clone)]
pub struct Funding {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) store: SharedStore,
    gateways: Vec<SharedGateway>,
    pub(crate) fee: FeeRule,
    /// Checkout: the fee is added to what the customer pays (a surcharge)
    /// instead of taken from what they fund.
    pub(crate) surcharge: bool,
}

/// Why a payment was not settled now.
#[derive(Debug, thiserror::Error)]
pub enum FundingError {
    /// The gateway could not verify it: recorded `pending_verification`.
    #[error("the gateway could not verify {reference}: {why}")]
    Unverified { reference: String, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What one reconciliation run did, per gateway.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Reconciled {
    pub gateway: String,
    /// Paid payments the gateway listed in the window.
    pub listed: usize,
    /// Of those, credited by this run (their webhook never arrived or failed).
    pub credited: Vec<FundingEvent>,
    /// Payments that stayed or became unmatched, rejected or pending.
    pub not_credited: Vec<FundingEvent>,
    /// The gateway's listing failed (the run goes on with the others).
    pub error: Option<String>,
    /// Checkouts still unpaid a day on, closed as abandoned by this run.
    pub abandoned: Vec<String>,
}

impl Funding {
    pub fn new(store: SharedStore, gateways: Vec<SharedGateway>, fee: FeeRule) -> Funding {
        Funding {
            inner: Arc::new(Inner {
                store,
                gateways,
                fee,
                surcharge: false,
            }),
        }
    }

    /// The same, with the checkout's fee shown as a surcharge (`true`): added
    /// to what the customer pays, so the wallet receives what they asked for.
    pub fn with_surcharge(self, surcharge: bool) -> Funding {
        let inner = Inner {
            store: self.inner.store.clone(),
            gateways: self.inner.gateways.clone(),
            fee: self.inner.fee,
            surcharge,
        };
        Funding {
            inner: Arc::new(inner),
        }
    }

    pub fn gateways(&self) -> &[SharedGateway] {
        &self.inner.gateways
    }

    pub fn gateway(&self, name: &str) -> Option<&SharedGateway> {
        self.inner.gateways.iter().find(|g| g.name() == name)
    }

    pub fn fee(&self) -> FeeRule {
        self.inner.fee
    }

    /// Whether a checkout's fee is added to what the customer pays.
    pub fn surcharges(&self) -> bool {
        self.inner.surcharge
    }

    /// A signed webhook's payment: verified with the gateway, then settled.
    pub async fn take_notice(
        &self,
        gateway: &SharedGateway,
        notice: PaymentNotice,
    ) -> Result<FundingRecorded, FundingError> {
        let store = &self.inner.store;
        // A re-sent webhook of a credited payment needs no verify call.
        if let Some(event) = store.funding_event(&notice.reference).await?
            && event.gateway == gateway.name()
            && event.status == FundingStatus::Credited
        {
            return Ok(FundingRecorded {
                before: Some(event.status),
                event,
                credited_now: false,
            });
        }
        let payment = match gateway.verify(&notice.reference).await {
            Ok(payment) => payment,
            Err(e) => {
                return Err(self
                    .unverified(gateway.name(), &notice, e.to_string())
                    .await);
            }
        };
        if notice
            .claimed_amount
            .is_some_and(|claimed| claimed != payment.amount)
        {
            tracing::warn!(
                gateway = gateway.name(),
                reference = notice.reference,
                claimed = %notice.claimed_amount.unwrap_or_default(),
                verified = %payment.amount,
                "the webhook's amount disagrees with the gateway's verify: the verified amount counts"
            );
        }
        Ok(self.settle(gateway.name(), payment, &notice).await?)
    }

    /// Records a payment the gateway could not verify (answered non-2xx so
    /// the gateway retries; the reconciler verifies it again).
    async fn unverified(&self, gateway: &str, notice: &PaymentNotice, why: String) -> FundingError {
        metrics::counter!("billpay_funding_verify_failures_total", "gateway" => gateway.to_owned())
            .increment(1);
        tracing::warn!(
            gateway,
            reference = notice.reference,
            why,
            "payment not verified: pending"
        );
        let (customer_ref, number) = (
            notice.customer_ref.as_deref(),
            notice.account_number.as_deref(),
        );
        let owner = match self.owner(gateway, customer_ref, number).await {
            Ok(owner) => owner,
            Err(e) => return e.into(),
        };
        let pending = NewFunding {
            gateway: gateway.to_owned(),
            gateway_reference: notice.reference.clone(),
            status: FundingStatus::PendingVerification,
            account_id: owner,
            amount: notice.claimed_amount.unwrap_or_default(),
            fee: Kobo::ZERO,
            currency: None,
            customer_ref: notice.customer_ref.clone(),
            account_number: notice.account_number.clone(),
            payer: None,
            note: format!("verify failed: {why}"),
        };
        if let Err(e) = self.inner.store.record_funding(pending).await {
            return e.into();
        }
        FundingError::Unverified {
            reference: notice.reference.clone(),
            why,
        }
    }

    /// A verified payment: credited to its owner, or kept as unmatched or
    /// rejected. `hints` are what the (signed) webhook said about its owner.
    pub async fn settle(
        &self,
        gateway: &str,
        payment: Payment,
        hints: &PaymentNotice,
    ) -> Result<FundingRecorded, StoreError> {
        let customer_ref = payment.customer_ref.clone();
        let customer_ref = customer_ref.or_else(|| hints.customer_ref.clone());
        let number = payment.account_number.clone();
        let number = number.or_else(|| hints.account_number.clone());
        let owner = self
            .owner(gateway, customer_ref.as_deref(), number.as_deref())
            .await?;
        let mut new = NewFunding {
            gateway: gateway.to_owned(),
            gateway_reference: payment.reference.clone(),
            status: FundingStatus::Credited,
            account_id: owner,
            amount: payment.amount,
            fee: Kobo::ZERO,
            currency: Some(payment.currency.clone()),
            customer_ref,
            account_number: number,
            payer: payment.payer.clone(),
            note: "verified paid".into(),
        };
        match (payment.creditable(), owner) {
            (Err(why), _) => {
                new.status = FundingStatus::Rejected;
                new.note = why.to_string();
            }
            (Ok(()), None) => {
                new.status = FundingStatus::Unmatched;
                new.note = "paid into no account billpay holds: assign it".into();
            }
            (Ok(()), Some(_)) => new.fee = self.inner.fee.fee(new.amount),
        }
        let recorded = self.inner.store.record_funding(new).await?;
        count(gateway, &recorded);
        Ok(recorded)
    }

    /// Who owns the reserved account a payment names (kept on every record,
    /// so the operator finds an account's rejected and pending payments too).
    async fn owner(
        &self,
        gateway: &str,
        customer_ref: Option<&str>,
        number: Option<&str>,
    ) -> Result<Option<billpay_domain::AccountId>, StoreError> {
        let store = &self.inner.store;
        store.funding_owner(gateway, customer_ref, number).await
    }

    /// Accounts a gateway assigned after the reservation (Paystack's
    /// `dedicatedaccount.assign.success`), stored for the customer's owner.
    pub async fn take_assignment(
        &self,
        gateway: &str,
        reservation: Reservation,
    ) -> Result<bool, StoreError> {
        let store = &self.inner.store;
        let owner = store
            .funding_owner(gateway, Some(&reservation.customer_ref), None)
            .await?;
        let Some(account_id) = owner else {
            tracing::warn!(
                gateway,
                customer = reservation.customer_ref,
                "accounts assigned to a customer billpay does not hold"
            );
            return Ok(false);
        };
        let accounts = reservation.accounts.into_iter();
        let accounts = accounts.map(|a| (a.bank_name, a.account_number, a.account_name));
        let new = NewReservation {
            account_id,
            gateway: gateway.to_owned(),
            customer_ref: reservation.customer_ref,
            accounts: accounts.collect(),
        };
        store.save_reservation(new).await?;
        Ok(true)
    }

    /// Lists every gateway's payments of the last `window` and settles those
    /// not credited yet; verifies again the payments left pending.
    pub async fn reconcile(&self, window: Duration) -> Vec<Reconciled> {
        let since = OffsetDateTime::now_utc() - window;
        let mut report = Vec::new();
        for gateway in &self.inner.gateways {
            report.push(self.reconcile_one(gateway, since).await);
        }
        report
    }

    async fn reconcile_one(&self, gateway: &SharedGateway, since: OffsetDateTime) -> Reconciled {
        let mut done = Reconciled {
            gateway: gateway.name().to_owned(),
            ..Reconciled::default()
        };
        let mut references = match self.listed_missing(gateway, since, &mut done).await {
            Ok(references) => references,
            Err(e) => {
                done.error = Some(e);
                Vec::new()
            }
        };
        references.extend(self.pending(gateway.name()).await.unwrap_or_default());
        self.reconcile_checkouts(gateway, &mut done).await;
        references.sort_by(|a, b| a.reference.cmp(&b.reference));
        references.dedup_by(|a, b| a.reference == b.reference);
        for notice in references {
            match self.take_notice(gateway, notice).await {
                Ok(recorded) if recorded.credited_now => {
                    metrics::counter!("billpay_funding_reconciler_found_total", "gateway" => gateway.name().to_owned()).increment(1);
                    done.credited.push(recorded.event);
                }
                Ok(recorded) if recorded.event.status != FundingStatus::Credited => {
                    done.not_credited.push(recorded.event)
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(gateway = gateway.name(), error = %e, "reconcile: not settled")
                }
            }
        }
        done
    }

    /// The gateway's paid payments since `since` that billpay has not credited.
    async fn listed_missing(
        &self,
        gateway: &SharedGateway,
        since: OffsetDateTime,
        done: &mut Reconciled,
    ) -> Result<Vec<PaymentNotice>, String> {
        let store = &self.inner.store;
        let customers = store
            .funding_customers(gateway.name())
            .await
            .map_err(|e| e.to_string())?;
        let listed = gateway
            .payments_since(since, &customers)
            .await
            .map_err(|e| e.to_string())?;
        let paid: Vec<Payment> = listed
            .into_iter()
            .filter(|p| p.creditable().is_ok())
            .collect();
        done.listed = paid.len();
        let mut missing = Vec::new();
        for payment in paid {
            let known = store
                .funding_event(&payment.reference)
                .await
                .map_err(|e| e.to_string())?;
            let credited = known.is_some_and(|e| {
                e.gateway == gateway.name() && e.status == FundingStatus::Credited
            });
            if !credited {
                missing.push(PaymentNotice {
                    reference: payment.reference,
                    claimed_amount: Some(payment.amount),
                    customer_ref: payment.customer_ref,
                    account_number: payment.account_number,
                });
            }
        }
        Ok(missing)
    }

    /// Payments left `pending_verification` with this gateway: all of them,
    /// a page at a time (a page that came back full may have left more, as
    /// a worker's claim may: issue 45).
    async fn pending(&self, gateway: &str) -> Result<Vec<PaymentNotice>, StoreError> {
        const PAGE: u32 = 500;
        let mut pending = Vec::new();
        loop {
            let filter = FundingFilter {
                status: Some(FundingStatus::PendingVerification),
                gateway: Some(gateway.to_owned()),
                limit: PAGE,
                offset: pending.len() as u32,
                ..FundingFilter::default()
            };
            let page = self.inner.store.funding_events(filter).await?;
            let full = page.len() as u32 == PAGE;
            pending.extend(page);
            if !full {
                break;
            }
        }
        let notices = pending.into_iter().map(|e| PaymentNotice {
            reference: e.gateway_reference,
            claimed_amount: None,
            customer_ref: e.customer_ref,
            account_number: e.account_number,
        });
        Ok(notices.collect())
    }

    /// Reconciles every `every` on whichever node holds the job's lease,
    /// until `shutdown`.
    pub async fn run(self, every: Duration, holder: String, shutdown: Arc<Notify>) {
        let lease = every + Duration::from_secs(60);
        loop {
            match self
                .inner
                .store
                .take_job_lease(RECONCILE_JOB, &holder, lease)
                .await
            {
                Ok(true) => {
                    for run in self.reconcile(BACKGROUND_WINDOW).await {
                        log_run(&run);
                    }
                }
                Ok(false) => tracing::debug!("another node reconciles funding"),
                Err(e) => tracing::warn!(error = %e, "funding reconciler: no lease"),
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.notified() => return,
            }
        }
    }
}

fn log_run(run: &Reconciled) {
    match &run.error {
        Some(error) => tracing::warn!(
            gateway = run.gateway,
            error,
            "funding reconciliation: listing failed"
        ),
        None if !run.credited.is_empty() => tracing::warn!(
            gateway = run.gateway,
            listed = run.listed,
            credited = run.credited.len(),
            "funding reconciliation credited payments whose webhook never arrived"
        ),
        None => tracing::info!(
            gateway = run.gateway,
            listed = run.listed,
            "funding reconciled"
        ),
    }
}

/// The `/metrics` counters of a payment's outcome.
pub(crate) fn count(gateway: &str, recorded: &FundingRecorded) {
    let gateway = gateway.to_owned();
    let event = &recorded.event;
    match event.status {
        FundingStatus::Credited if recorded.credited_now => {
            metrics::counter!("billpay_funding_credited_total", "gateway" => gateway.clone())
                .increment(1);
            let kobo = u64::try_from(event.amount.0).unwrap_or_default();
            metrics::counter!("billpay_funding_credited_kobo_total", "gateway" => gateway)
                .increment(kobo);
        }
        FundingStatus::Unmatched if recorded.before != Some(FundingStatus::Unmatched) => {
            metrics::counter!("billpay_funding_unmatched_total", "gateway" => gateway).increment(1)
        }
        FundingStatus::Rejected if recorded.before != Some(FundingStatus::Rejected) => {
            metrics::counter!("billpay_funding_rejected_total", "gateway" => gateway).increment(1)
        }
        _ => {}
    }
}
