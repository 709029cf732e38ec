//! The brand every customer page wears: the settings' (`[brand]`) with the
//! owner's console edits laid over them (read through the store's
//! `BrandCache`: an edit shows within a second). A layer puts the brand in
//! force for the request ([`in_force`]); the layout reads it through
//! [`current`] (`Chrome`, `public.html`), so no handler passes it along.
//! Also what is served from the brand: the logo, the icons, the web
//! manifest.

use billpay_domain::brand::{Brand, BrandEdits, LogoKind};
use billpay_store::{BrandCache, SharedStore};
use std::sync::{Arc, Mutex};

tokio::task_local! {
    static BRAND: Arc<Brand>;
}

/// The brand in force for this request (the settings' default outside one).
pub fn current() -> Arc<Brand> {
    BRAND
        .try_with(Arc::clone)
        .unwrap_or_else(|_| Arc::new(Brand::default()))
}

/// Runs `work` with `brand` in force (what [`current`] answers in it).
pub async fn in_force<F: Future>(brand: Arc<Brand>, work: F) -> F::Output {
    BRAND.scope(brand, work).await
}

/// The icons of a PNG logo, resized once at start.
#[derive(Default)]
pub struct Icons {
    pub png_192: Option<Arc<[u8]>>,
    pub png_512: Option<Arc<[u8]>>,
}

impl Icons {
    fn of(brand: &Brand) -> Icons {
        let Some(logo) = brand.logo.as_ref().filter(|l| l.kind == LogoKind::Png) else {
            return Icons::default();
        };
        let Ok(image) = image::load_from_memory_with_format(&logo.bytes, image::ImageFormat::Png)
        else {
            tracing::warn!("BILLPAY_BRAND_LOGO: the PNG cannot be read: the default icon is used");
            return Icons::default();
        };
        let resized = |side: u32| -> Option<Arc<[u8]>> {
            let square = image.resize(side, side, image::imageops::FilterType::Lanczos3);
            // centred on a transparent square of `side`
            let mut canvas = image::RgbaImage::new(side, side);
            let (x, y) = ((side - square.width()) / 2, (side - square.height()) / 2);
            image::imageops::overlay(&mut canvas, &square.to_rgba8(), x.into(), y.into());
            let mut bytes = std::io::Cursor::new(Vec::new());
            canvas.write_to(&mut bytes, image::ImageFormat::Png).ok()?;
            Some(bytes.into_inner().into())
        };
        Icons {
            png_192: resized(192),
            png_512: resized(512),
        }
    }
}

/// The settings' brand, the owner's edits and what is made from the logo.
pub struct BrandSource {
    settings: Brand,
    edits: Option<BrandCache>,
    /// The last edits seen and the brand made with them.
    last: Mutex<Option<(Arc<BrandEdits>, Arc<Brand>)>>,
    pub icons: Icons,
}

impl BrandSource {
    /// `settings` alone (no edits are read).
    pub fn fixed(settings: Brand) -> Self {
        BrandSource {
            icons: Icons::of(&settings),
            settings,
            edits: None,
            last: Mutex::new(None),
        }
    }

    /// `settings` with the owner's edits stored in `store` laid over them.
    pub fn new(settings: Brand, store: SharedStore) -> Self {
        BrandSource {
            edits: Some(BrandCache::new(store)),
            ..Self::fixed(settings)
        }
    }

    /// The brand now: the settings', with the owner's edits (a store that
    /// cannot be read: the last brand, else the settings').
    pub async fn get(&self) -> Arc<Brand> {
        let Some(cache) = &self.edits else {
            return self.fixed_brand();
        };
        let edits = match cache.get().await {
            Ok(edits) => edits,
            Err(e) => {
                tracing::warn!(error = %e, "the brand's edits cannot be read: the settings' brand is shown");
                return self.fixed_brand();
            }
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, brand)) = last.as_ref()
            && Arc::ptr_eq(seen, &edits)
        {
            return brand.clone();
        }
        let brand = Arc::new(self.settings.with(&edits));
        *last = Some((edits, brand.clone()));
        brand
    }

    fn fixed_brand(&self) -> Arc<Brand> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.as_ref() {
            Some((_, brand)) => brand.clone(),
            None => Arc::new(self.settings.clone()),
        }
    }
}

impl Default for BrandSource {
    fn default() -> Self {
        BrandSource::fixed(Brand::default())
    }
}
