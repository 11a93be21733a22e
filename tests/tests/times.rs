//! Time across files (issue 16, item 1): ncrcat and ncra convert each later file's
//! record coordinate and its bounds to the first file's units and calendar before
//! concatenating or averaging (`nco_core::multifile::TimeAlign`), on small files built
//! with ncgen. Values are NCO 5.1.4's where NCO is right; where it is not (an integer
//! time meeting half days, files of other calendars) the tests check NCO's values when
//! run against it (`NCO_RS_BIN_DIR=/usr/bin`) and ours otherwise (README,
//! compatibility notes).

use crate::common::{bad_input, cdl, data, header_lines};
use nco_tests::{is_nco, nco, Scratch};

/// A monthly file: `time` (with `time_bnds`) of type `ty` in `units`, values `time`
/// and bounds `bnds` (two per record), and a variable `v`.
fn monthly(s: &Scratch, name: &str, ty: &str, units: &str, time: &str, bnds: &str) -> String {
    cdl(
        s,
        name,
        &format!(
            "netcdf {name} {{ dimensions: time = UNLIMITED ; nbnd = 2 ; variables: \
             {ty} time(time) ; time:units = \"{units}\" ; time:bounds = \"time_bnds\" ; \
             {ty} time_bnds(time, nbnd) ; float v(time) ; \
             data: time = {time} ; time_bnds = {bnds} ; v = 1, 2 ; }}"
        ),
    )
}

/// January and February 2000 in days since 2000-01-01 (double).
fn jan_feb(s: &Scratch) -> String {
    monthly(
        s,
        "jf",
        "double",
        "days since 2000-01-01",
        "15.5, 45",
        "0, 31, 31, 60",
    )
}

/// March and April 2000 in hours since 2000-03-01 (double).
fn mar_apr_hours(s: &Scratch) -> String {
    monthly(
        s,
        "ma",
        "double",
        "hours since 2000-03-01",
        "372, 1104",
        "0, 744, 744, 1464",
    )
}

#[track_caller]
fn run(op: &str, s: &Scratch, inputs: &[&str]) -> String {
    let out = s.arg(&format!("{op}.nc"));
    nco(op).args(["-h", "-O"]).args(inputs).arg(&out).succeeds();
    out
}

#[test]
fn ncrcat_converts_time_and_its_bounds_to_the_first_files_units() {
    let s = Scratch::new();
    let (a, b) = (jan_feb(&s), mar_apr_hours(&s));
    let out = run("ncrcat", &s, &[&a, &b]);
    assert_eq!(data(&out, "time"), "time = 15.5, 45, 75.5, 106");
    assert_eq!(
        data(&out, "time_bnds"),
        "time_bnds = 0, 31, 31, 60, 60, 91, 91, 121"
    );
}

#[test]
fn ncra_averages_time_and_its_bounds_in_the_first_files_units() {
    let s = Scratch::new();
    let (a, b) = (jan_feb(&s), mar_apr_hours(&s));
    let out = run("ncra", &s, &[&a, &b]);
    assert_eq!(data(&out, "time"), "time = 60.5");
    assert_eq!(data(&out, "time_bnds"), "time_bnds = 45.5, 75.75");
    assert_eq!(data(&out, "v"), "v = 1.5");
}

#[test]
fn epochs_with_a_time_of_day_and_integer_later_files() {
    // Integer hours since 2000-03-01 06:00 and integer days since 2000-03-01 into a
    // double time in days since 2000-01-01.
    let s = Scratch::new();
    let a = jan_feb(&s);
    let h = monthly(
        &s,
        "h6",
        "int",
        "hours since 2000-03-01 06:00",
        "366, 1098",
        "-6, 738, 738, 1458",
    );
    let d = monthly(
        &s,
        "d",
        "int",
        "days since 2000-03-01",
        "15, 45",
        "0, 31, 31, 61",
    );
    let out = run("ncrcat", &s, &[&a, &h, &d]);
    assert_eq!(data(&out, "time"), "time = 15.5, 45, 75.5, 106, 75, 105");
    assert_eq!(
        data(&out, "time_bnds"),
        "time_bnds = 0, 31, 31, 60, 60, 91, 91, 121, 60, 91, 91, 121"
    );
    let out = run("ncra", &s, &[&a, &d]);
    assert_eq!(data(&out, "time"), "time = 60.125");
}

#[test]
fn an_integer_time_takes_half_days_of_later_files_exactly() {
    // The first file's time is int days; the later one's hours land on half days.
    let s = Scratch::new();
    let a = monthly(
        &s,
        "ij",
        "int",
        "days since 2000-01-01",
        "15, 45",
        "0, 31, 31, 60",
    );
    let b = mar_apr_hours(&s);
    let cat = run("ncrcat", &s, &[&a, &b]);
    let avg = run("ncra", &s, &[&a, &b]);
    if is_nco() {
        // Rounded into the int: 75.5 becomes 76, a 12-hour error.
        assert_eq!(data(&cat, "time"), "time = 15, 45, 76, 106");
        assert_eq!(data(&avg, "time"), "time = 60");
        assert_eq!(data(&avg, "time_bnds"), "time_bnds = 46, 76");
        return;
    }
    assert_eq!(header_lines(&cat, "time("), "double time(time) ;");
    assert_eq!(
        header_lines(&cat, "time_bnds("),
        "double time_bnds(time, nbnd) ;"
    );
    assert_eq!(data(&cat, "time"), "time = 15, 45, 75.5, 106");
    assert_eq!(data(&avg, "time"), "time = 60.375");
    assert_eq!(data(&avg, "time_bnds"), "time_bnds = 45.5, 75.75");
    // Whole numbers keep the integer type, as in NCO.
    let d = monthly(
        &s,
        "d",
        "int",
        "days since 2000-03-01",
        "15, 45",
        "0, 31, 31, 61",
    );
    let cat = run("ncrcat", &s, &[&a, &d]);
    assert_eq!(header_lines(&cat, "time("), "int time(time) ;");
    assert_eq!(data(&cat, "time"), "time = 15, 45, 75, 105");
}

#[test]
fn records_left_out_do_not_change_an_integer_times_type() {
    // The half days are in the later file's records, which -d leaves out: the output
    // holds whole days only and keeps the int type, as NCO 5.1.4 does (found by a
    // break test: every record of the later file used to decide).
    let s = Scratch::new();
    let a = monthly(
        &s,
        "ij",
        "int",
        "days since 2000-01-01",
        "15, 45",
        "0, 31, 31, 60",
    );
    let b = mar_apr_hours(&s);
    let out = s.arg("out.nc");
    nco("ncrcat")
        .args(["-O", "-d", "time,0,1", &a, &b, &out])
        .succeeds();
    assert_eq!(header_lines(&out, "time("), "int time(time) ;");
    assert_eq!(
        header_lines(&out, "time_bnds("),
        "int time_bnds(time, nbnd) ;"
    );
    assert_eq!(data(&out, "time"), "time = 15, 45");
}

/// Two records in `calendar`: days since `epoch`.
fn in_calendar(s: &Scratch, name: &str, calendar: &str, epoch: &str, time: &str) -> String {
    cdl(
        s,
        name,
        &format!(
            "netcdf {name} {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
             time:units = \"days since {epoch}\" ; time:calendar = \"{calendar}\" ; \
             float v(time) ; data: time = {time} ; v = 1, 2 ; }}"
        ),
    )
}

#[test]
fn later_files_of_another_calendar_convert_through_the_date() {
    let s = Scratch::new();
    let std = in_calendar(&s, "std", "standard", "2001-01-01", "59, 365");
    // noleap day 59 of 2000 is 1 March; 365.25 is 2001-01-01 06:00.
    let noleap = in_calendar(&s, "nl", "noleap", "2000-01-01", "59, 365.25");
    let out = run("ncrcat", &s, &[&std, &noleap]);
    if is_nco() {
        // NCO counts noleap days as standard ones: one day off after February.
        assert_eq!(data(&out, "time"), "time = 59, 365, -307, -0.75");
        return;
    }
    assert_eq!(data(&out, "time"), "time = 59, 365, -306, 0.25");
    // The other way round: standard 2001-03-01 is noleap day 424 since 2000-01-01.
    let out = run("ncrcat", &s, &[&noleap, &std]);
    assert_eq!(data(&out, "time"), "time = 59, 365.25, 424, 730");
}

#[test]
fn bad_date_missing_from_the_first_files_calendar() {
    // Compatibility difference: NCO converts 30 February as some other day.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let std = in_calendar(&s, "std", "standard", "2001-01-01", "59, 365");
    let d360 = in_calendar(&s, "d360", "360_day", "2000-01-01", "59, 1");
    bad_input("ncrcat", &[&std, &d360], "2000-02-30", "");
}
