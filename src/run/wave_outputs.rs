//! The wave files of a run beyond the VCD itself: the FST (`--fst PATH`) and the GTKWave save
//! file with its translate filters (`--gtkw PATH`, by default beside the VCD or FST).
//!
//! The run writes its VCD as before: to `--vcd`, or, when only `--fst` is given, to a temporary
//! file beside the FST (`.NAME.vcd.hwsim-PID.tmp`, removed after the conversion, on an error
//! and on an interrupt: it is never the wave held in memory, and never copied). After the run the
//! VCD is read back once from its file, converted to FST ([`crate::report::waves::write_fst`]) and used
//! to build the save file ([`crate::report::gtkw`]). Every file goes through [`crate::report::output`]: refused
//! when it names an input or another output, written under a temporary name and renamed.

use std::path::{Path, PathBuf};

use crate::build::testbench::Loaded;
use crate::input::yaml::InputError;
use crate::report::waves::Wave;

/// Filter file keys the save file may use (see [`crate::report::gtkw`]).
const FILTER_KEYS: [&str; 4] = ["opcode", "ecn", "dcqcn_state", "format"];

/// An existing path that is not a regular file (a device, a FIFO).
fn special(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_file())
}

/// The name the temporary VCD of `--fst F` is staged under (`F.vcd`: the staged file is
/// `.F.vcd.hwsim-PID.tmp` beside F, and it is never committed).
fn scratch_name(fst: &Path) -> PathBuf {
    let mut n = fst.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    n.push(".vcd");
    fst.with_file_name(n)
}

/// Where the wave outputs of one run go.
pub struct WaveOutputs {
    vcd: Option<PathBuf>,
    fst: Option<PathBuf>,
    gtkw: Option<PathBuf>,
    /// `--vcd X.fst` given together with `--fst`: refused by `validate`.
    fst_by_extension: Option<PathBuf>,
    /// The temporary VCD of an `--fst` without `--vcd` (removed when this is dropped).
    scratch: Option<crate::report::output::Staged>,
}

/// A path whose extension says FST (`waves/x.fst`, any case).
fn is_fst(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("fst"))
}

impl WaveOutputs {
    /// From the run options: `--vcd`, `--fst`, `--gtkw`. A `--vcd` path ending in `.fst` asks
    /// for FST (as `--fst` would; both at once is refused by [`WaveOutputs::validate`]). The save
    /// file defaults to the VCD's (else the FST's) path with `.gtkw`.
    pub fn new(vcd: Option<PathBuf>, fst: Option<PathBuf>, gtkw: Option<PathBuf>) -> WaveOutputs {
        let (vcd, fst, fst_by_extension) = match (vcd, fst) {
            (Some(v), f) if is_fst(&v) => match f {
                None => (None, Some(v), None),
                Some(f) => (None, Some(f), Some(v)),
            },
            (v, f) => (v, f, None),
        };
        // No save file beside a sink (`--vcd /dev/null`): there is no wave to open.
        let gtkw = gtkw.or_else(|| {
            vcd.as_deref()
                .or(fst.as_deref())
                .filter(|p| !special(p))
                .map(crate::report::gtkw::default_path)
        });
        WaveOutputs {
            vcd,
            fst,
            gtkw,
            fst_by_extension,
            scratch: None,
        }
    }

    /// The VCD file written, if any (not a `--vcd` that named an FST file).
    pub fn vcd(&self) -> Option<&Path> {
        self.vcd.as_deref()
    }

    /// Refuses what cannot be done: the FST and the save file read the VCD back, which a sink
    /// (`--vcd /dev/null`, a FIFO) does not allow.
    pub fn validate(&self) -> Result<(), String> {
        if let (Some(v), Some(f)) = (&self.fst_by_extension, &self.fst) {
            return Err(format!(
                "--vcd {} names an FST file (by its extension) and --fst {} is given too: give one of them",
                v.display(),
                f.display()
            ));
        }
        if let Some(v) = self.vcd.as_deref().filter(|p| special(p)) {
            if self.fst.is_some() || self.gtkw.is_some() {
                return Err(format!(
                    "--vcd {} is not a regular file, and --fst / --gtkw read the VCD back: give --vcd a file, or only --fst",
                    v.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether any wave is written.
    pub fn any(&self) -> bool {
        self.vcd.is_some() || self.fst.is_some()
    }

    /// Every output path with its option, for [`crate::report::output::check_outputs`] (the filter
    /// files the save file may need included).
    pub fn paths(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v = Vec::new();
        if let Some(p) = &self.fst {
            v.push(("--fst", p.clone()));
        }
        if let Some(g) = &self.gtkw {
            v.push(("--gtkw", g.clone()));
            let stem = g
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            for k in FILTER_KEYS {
                v.push(("--gtkw", g.with_file_name(format!("{stem}.{k}.txt"))));
            }
        }
        v
    }

    /// Sets up the run's VCD: to the `--vcd` file, else (only `--fst`) to a temporary file in
    /// the FST's folder.
    pub fn setup(&mut self, opts: &mut crate::run::runner::Options) -> Result<(), InputError> {
        opts.vcd = self.vcd.clone();
        if let (None, Some(f)) = (&self.vcd, &self.fst) {
            let (file, staged) = crate::report::output::stage(&scratch_name(f))?;
            opts.vcd_writer = Some(Box::new(std::io::BufWriter::new(file)));
            self.scratch = Some(staged);
        }
        Ok(())
    }

    /// After the run: the FST and the save file. `cmd_trace`: the command line's `--trace` globs
    /// (they chose the wave's signals: the save file shows them, and a `view:` glob that selects
    /// nothing is then no error). `levels`: the nets drawn as analog steps (the report's
    /// `levels`).
    pub fn finish(&self, l: &Loaded, cmd_trace: &[String], levels: &[String]) -> Result<(), InputError> {
        if self.fst.is_none() && self.gtkw.is_none() {
            // Only a VCD (perhaps a sink): nothing reads it back.
            return Ok(());
        }
        let name: PathBuf = match (&self.vcd, &self.scratch) {
            (Some(p), _) => p.clone(),
            (None, Some(s)) => s.temporary().to_path_buf(),
            (None, None) => return Ok(()),
        };
        let mut wave = Wave::open_written(&name)?;
        if let Some(f) = &self.fst {
            let (file, staged) = crate::report::output::stage(f)?;
            let w = crate::report::waves::write_fst(&mut wave, std::io::BufWriter::new(file))
                .map_err(|e| InputError::new(f, format!("cannot write: {e}")))?;
            drop(w);
            staged.commit()?;
        }
        if let Some(g) = &self.gtkw {
            let dump: &Path = self.vcd.as_deref().or(self.fst.as_deref()).expect("a wave file");
            for (p, b) in crate::report::gtkw::files(l, &mut wave, dump, g, cmd_trace, levels)? {
                crate::report::output::write_file(&p, &b)?;
            }
        }
        Ok(())
    }

    /// The files written, for the summary line.
    pub fn written(&self) -> Vec<&Path> {
        [&self.vcd, &self.fst, &self.gtkw]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
            .collect()
    }
}
