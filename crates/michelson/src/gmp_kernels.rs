//! GMP's own Broadwell/Skylake multiplication kernels on x86-64 CPUs its dispatch does not know.
//!
//! `gmp-mpfr-sys` builds GMP 6.3 as a "fat" library: on its first call GMP reads the CPU's
//! vendor, family and model and fills a table of function pointers (`__gmpn_cpuvec`, GMP's
//! `struct cpuvec_t`) with the assembly kernels written for that model. GMP 6.3's table of Intel
//! models ends at Kaby Lake: on a later CPU (the benchmark machine's Xeon, family 6 model 0xCF)
//! it keeps generic kernels — a `mul_basecase` in C over `addmul_1` — and a product of two
//! 3 MB integers takes 1.3-1.5× the time of the same GMP with the kernels it picks for a
//! Skylake (BENCHMARKS.md, "Michelson: recursion frames and GMP's kernels against the gas"). Octez's gas for
//! `MUL` assumes GMP's speed, so on such a CPU the interpreter points the table's
//! multiplication entries at those kernels (the ones `CPUVEC_SETUP_coreihwl`,
//! `CPUVEC_SETUP_coreibwl` and `CPUVEC_SETUP_skylake` in GMP's generated `fat.h` set), once,
//! before its first GMP product.
//!
//! Only when all of this holds: x86-64, the CPU has the instructions those kernels use (BMI2:
//! `mulx`; ADX: `adcx`/`adox`), the linked GMP is 6.3 (whose `cpuvec_t` layout, from its
//! `gmp-impl.h`, is written below) and GMP left its generic `mul_basecase` in the table, i.e.
//! it recognised no model. Anywhere else GMP's own choice stands.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use std::sync::Once;

    /// GMP 6.3's `struct cpuvec_t`: 37 kernel pointers in the order of `gmp-impl.h`, then five
    /// `mp_size_t` thresholds.
    const ENTRIES: usize = 42;
    const ADD_N: usize = 0;
    const ADDMUL_1: usize = 3;
    const ADDMUL_2: usize = 4;
    const MUL_1: usize = 25;
    const MUL_BASECASE: usize = 26;
    const MULLO_BASECASE: usize = 27;
    const SQR_BASECASE: usize = 33;
    const SUB_N: usize = 34;
    const SUBMUL_1: usize = 36;
    const MUL_TOOM22_THRESHOLD: usize = 37;
    const MUL_TOOM33_THRESHOLD: usize = 38;
    const SQR_TOOM2_THRESHOLD: usize = 39;
    const SQR_TOOM3_THRESHOLD: usize = 40;

    extern "C" {
        static mut __gmpn_cpuvec: [usize; ENTRIES];
        fn __gmpn_cpuvec_init();
        static __gmp_version: *const std::ffi::c_char;
        fn __gmpn_mul_basecase_fat();
        fn __gmpn_add_n_coreihwl();
        fn __gmpn_sub_n_coreihwl();
        fn __gmpn_submul_1_coreihwl();
        fn __gmpn_addmul_2_coreihwl();
        fn __gmpn_addmul_1_coreibwl();
        fn __gmpn_mul_1_coreibwl();
        fn __gmpn_mul_basecase_coreibwl();
        fn __gmpn_mullo_basecase_coreibwl();
        fn __gmpn_sqr_basecase_coreibwl();
    }

    static SELECTED: Once = Once::new();

    /// Selects the kernels if the conditions of the module's documentation hold (once).
    pub(crate) fn select() {
        SELECTED.call_once(|| {
            if !(std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("adx"))
            {
                return;
            }
            // SAFETY: `__gmp_version` is GMP's constant NUL-terminated version string.
            let version = unsafe { std::ffi::CStr::from_ptr(__gmp_version) };
            if version.to_bytes() != b"6.3.0" {
                return;
            }
            // SAFETY: GMP 6.3 (checked above) is a fat build here (`gmp-mpfr-sys` configures it
            // with `--enable-fat`; the `_fat` and model symbols below only exist in one), whose
            // `__gmpn_cpuvec` has the layout above. `__gmpn_cpuvec_init` is GMP's own
            // initialisation, which sets `__gmpn_cpuvec_initialized`, so GMP never fills the
            // table again. No other code of the process calls GMP while this runs: the
            // interpreter is its only caller and runs this before its first GMP call.
            unsafe {
                __gmpn_cpuvec_init();
                let table = &mut *std::ptr::addr_of_mut!(__gmpn_cpuvec);
                if table[MUL_BASECASE] != __gmpn_mul_basecase_fat as *const () as usize {
                    return;
                }
                table[ADD_N] = __gmpn_add_n_coreihwl as *const () as usize;
                table[SUB_N] = __gmpn_sub_n_coreihwl as *const () as usize;
                table[SUBMUL_1] = __gmpn_submul_1_coreihwl as *const () as usize;
                table[ADDMUL_2] = __gmpn_addmul_2_coreihwl as *const () as usize;
                table[ADDMUL_1] = __gmpn_addmul_1_coreibwl as *const () as usize;
                table[MUL_1] = __gmpn_mul_1_coreibwl as *const () as usize;
                table[MUL_BASECASE] = __gmpn_mul_basecase_coreibwl as *const () as usize;
                table[MULLO_BASECASE] = __gmpn_mullo_basecase_coreibwl as *const () as usize;
                table[SQR_BASECASE] = __gmpn_sqr_basecase_coreibwl as *const () as usize;
                table[MUL_TOOM22_THRESHOLD] = 26;
                table[MUL_TOOM33_THRESHOLD] = 73;
                table[SQR_TOOM2_THRESHOLD] = 32;
                table[SQR_TOOM3_THRESHOLD] = 117;
            }
        });
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::select;

/// GMP's own dispatch stands on other architectures.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn select() {}
