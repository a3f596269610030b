//! The docs site as a person sees it: the committed `docs/site/` (which `cargo xtask
//! matrix --check` holds to what the generator writes) rendered by headless Chromium
//! straight from disk, in light and dark mode. Skipped (with a note on stderr) where no Chromium is
//! installed — CI machines may not have it; `apt-get install chromium` brings it.
//! Set `XTASK_SCREENSHOT_DIR` to keep the screenshots for a look.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::site;

/// A Chromium binary on PATH (or named by `XTASK_CHROMIUM`).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("XTASK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Screenshots `page` at 1280×1400 into `png`. A hung browser is killed rather than
/// hanging the test suite.
fn screenshot(browser: &Path, profile: &Path, page: &Path, png: &Path, dark: bool) {
    let mut cmd = Command::new(browser);
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-extensions"])
        .arg("--window-size=1280,1400")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()));
    if dark {
        cmd.arg("--force-dark-mode").arg("--blink-settings=preferredColorScheme=0");
    }
    cmd.arg(format!("file://{}", page.display())).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            assert!(status.success(), "chromium failed on {}: {status}", page.display());
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish a screenshot of {} in two minutes", page.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(png.is_file(), "no screenshot written for {}", page.display());
}

struct Image {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).expect("open screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|px| match channels {
            1 | 2 => [px[0]; 3],
            _ => [px[0], px[1], px[2]],
        })
        .collect();
    Image { width: info.width, height: info.height, rgb }
}

fn luma(px: [u8; 3]) -> f64 {
    0.2126 * f64::from(px[0]) + 0.7152 * f64::from(px[1]) + 0.0722 * f64::from(px[2])
}

impl Image {
    /// The most common colour: the page background.
    fn background(&self) -> [u8; 3] {
        let mut counts = std::collections::HashMap::new();
        for px in &self.rgb {
            *counts.entry(*px).or_insert(0u32) += 1;
        }
        counts.into_iter().max_by_key(|(_, n)| *n).map(|(px, _)| px).expect("pixels")
    }

    /// Share of pixels in the top `rows` whose brightness is far from the background's:
    /// text, rules and badges.
    fn ink(&self, rows: u32) -> f64 {
        let bg = luma(self.background());
        let n = (rows.min(self.height) * self.width) as usize;
        let inked = self.rgb[..n].iter().filter(|px| (luma(**px) - bg).abs() > 60.0).count();
        inked as f64 / n as f64
    }
}

#[test]
fn site_renders_readably_from_disk_in_light_and_dark_mode() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no Chromium on PATH (apt-get install chromium to run this check)");
        return;
    };
    let root = crate::find_workspace_root(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).expect("the deja workspace");
    // A copy, so the blank page below is not written into the checkout.
    let work = tempfile::tempdir().expect("tempdir");
    let mut pages_on_disk = Vec::new();
    let mut stack = vec![root.join(site::SITE_DIR)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/site exists; run `cargo xtask matrix`") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&root).expect("under root").to_path_buf();
            let dest = work.path().join(&rel);
            std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&path, dest).expect("copy page");
            pages_on_disk.push(rel);
        }
    }
    let shots = std::env::var_os("XTASK_SCREENSHOT_DIR").map(PathBuf::from).unwrap_or_else(|| work.path().join("shots"));
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let site_dir = work.path().join(site::SITE_DIR);
    let harness_pages = Path::new(site::SITE_DIR).join("harnesses");
    let first = pages_on_disk.iter().filter(|p| p.starts_with(&harness_pages)).min().expect("at least one harness page");
    let pages = [("index", site_dir.join("index.html")), ("harness", work.path().join(first))];
    // An empty page in the site's style: what "nothing rendered" looks like.
    std::fs::write(
        site_dir.join("blank.html"),
        "<!DOCTYPE html><html><head><link rel=\"stylesheet\" href=\"style.css\"></head><body></body></html>",
    )
    .expect("blank page");

    for dark in [false, true] {
        let mode = if dark { "dark" } else { "light" };
        let blank_png = shots.join(format!("blank-{mode}.png"));
        screenshot(&browser, &work.path().join("profile"), &site_dir.join("blank.html"), &blank_png, dark);
        let blank = decode(&blank_png);
        for (name, page) in &pages {
            let png = shots.join(format!("{name}-{mode}.png"));
            screenshot(&browser, &work.path().join("profile"), page, &png, dark);
            let img = decode(&png);
            assert_eq!((img.width, img.height), (1280, 1400), "{name} {mode}");
            let bg = luma(img.background());
            if dark {
                assert!(bg < 60.0, "{name}: dark mode should have a dark background, got luma {bg:.0}");
            } else {
                assert!(bg > 200.0, "{name}: light mode should have a light background, got luma {bg:.0}");
            }
            let ink = img.ink(900);
            assert!(ink > 0.01, "{name} {mode}: the page looks empty ({:.2}% ink) — see {}", ink * 100.0, png.display());
            assert!(ink > 5.0 * blank.ink(900).max(0.001), "{name} {mode}: no more ink than an empty page");
        }
    }
    eprintln!("screenshots in {}", shots.display());
}
