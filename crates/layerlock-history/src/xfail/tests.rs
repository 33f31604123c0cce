use super::*;

const TEST_FILE: &str = r#"import pytest
from pytest import mark

pytestmark = [pytest.mark.timeout(30), pytest.mark.xfail(reason="module wide")]


@pytest.mark.xfail(reason="function level", strict=True)
def test_function():
    pass


@pytest.mark.skipif(True, reason="x")
@mark.xfail(
    reason="spans " "lines",
    strict=False,
)
async def test_async_multiline():
    pass


def test_plain():
    pass


@pytest.mark.parametrize(
    "device, n",
    [
        ("cpu", 1),
        pytest.param("cuda", 2, marks=pytest.mark.xfail(reason="cuda flaky"), id="on-cuda"),
        pytest.param(
            "rocm",
            3,
            marks=[pytest.mark.slow, pytest.mark.xfail(strict=True, reason="rocm")],
        ),
    ],
    ids=["cpu-1", "ignored-by-explicit-id", "amd"],
)
def test_params(device, n):
    pass


@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.xfail(strict=True, reason="param"))])
@pytest.mark.xfail(strict=False, reason="function wins")
def test_function_over_param(x):
    pass


@pytest.mark.parametrize("x", [1, pytest.param(4, marks=pytest.mark.xfail(reason="four"))])
def test_auto_ids(x):
    pass


@pytest.mark.parametrize("x", [object(), pytest.param(object(), marks=pytest.mark.xfail(reason="only"))])
def test_unknown_ids(x):
    pass


@pytest.mark.xfail(reason="outer class")
class TestOuter:
    class TestInner:
        pytestmark = pytest.mark.xfail(reason="inner class", strict=True)

        def test_inner(self):
            pass

    def test_outer(self):
        def test_nested_helper():
            pass

    @xfail
    def test_bare(self):
        pass


@pytest.mark.parametrize("a,b", [(1, 2), pytest.param(3, 4, marks=(pytest.mark.xfail(reason="34"),))])
@pytest.mark.xfail(reason="class decorator")
class TestParamClass:
    pytestmark = [pytest.mark.slow, pytest.mark.xfail(reason="class body")]

    def test_m(self, a, b):
        pass


class TestOther:
    def test_outer(self):
        s = """
@pytest.mark.xfail(reason="in a string")
"""

    @pytest.mark.xfail(reason=f"formatted {1}", strict=STRICT)
    def test_not_literal(self):
        pass
"#;

/// The 1-based line of the first line of `source` holding `needle`.
fn line_with(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("no line holds {needle:?}"))
}

fn find(name: &str, class: Option<&str>) -> Option<XfailMarker> {
    find_xfail(TEST_FILE, &NodeId::parse(name, class))
}

fn marker(
    needle: &str,
    scope: MarkerScope,
    strict: Option<bool>,
    reason: Option<&str>,
) -> XfailMarker {
    XfailMarker {
        line: line_with(TEST_FILE, needle),
        scope,
        strict,
        reason: reason.map(str::to_owned),
    }
}

#[test]
fn function_decorators() {
    assert_eq!(
        find("test_function", None),
        Some(marker(
            "reason=\"function level\"",
            MarkerScope::Function,
            Some(true),
            Some("function level")
        ))
    );
    // A decorator over several lines, on an async def, under another marker.
    assert_eq!(
        find("test_async_multiline", None),
        Some(marker(
            "@mark.xfail(",
            MarkerScope::Function,
            Some(false),
            Some("spans lines")
        ))
    );
    assert_eq!(
        find("test_bare", Some("TestOuter")),
        Some(marker("@xfail", MarkerScope::Function, None, None))
    );
    // Only literals are read.
    assert_eq!(
        find("test_not_literal", Some("TestOther")),
        Some(marker(
            "reason=f\"formatted",
            MarkerScope::Function,
            None,
            None
        ))
    );
}

#[test]
fn params_by_explicit_id_by_ids_list_and_by_literal_values() {
    let cuda = marker(
        "reason=\"cuda flaky\"",
        MarkerScope::Param,
        None,
        Some("cuda flaky"),
    );
    assert_eq!(find("test_params[on-cuda]", None), Some(cuda));
    // The third value's id comes from `ids=[...]`, two lines below it.
    let rocm = marker(
        "reason=\"rocm\"",
        MarkerScope::Param,
        Some(true),
        Some("rocm"),
    );
    assert_eq!(find("test_params[amd]", None), Some(rocm));
    // A case without an xfail param of its own gets the next marker out.
    let module = marker(
        "module wide",
        MarkerScope::Module,
        None,
        Some("module wide"),
    );
    assert_eq!(find("test_params[cpu-1]", None), Some(module.clone()));
    assert_eq!(find("test_params", None), Some(module));

    // pytest.param(4, ...) runs as [4]; [1] is not it.
    let four = marker("reason=\"four\"", MarkerScope::Param, None, Some("four"));
    assert_eq!(find("test_auto_ids[4]", None), Some(four));
    assert_eq!(
        find("test_auto_ids[1]", None).map(|m| m.scope),
        Some(MarkerScope::Module)
    );

    // Values pytest names `argname + index`.
    let only = marker("reason=\"only\"", MarkerScope::Param, None, Some("only"));
    assert_eq!(find("test_unknown_ids[x1]", None), Some(only));
    assert_eq!(
        find("test_unknown_ids[x0]", None).map(|m| m.scope),
        Some(MarkerScope::Module)
    );
}

/// Cases checked against pytest 9.2's own ids and `iter_markers("xfail")`.
const IDS_FILE: &str = r#"import pytest

@pytest.mark.parametrize("v", [1, 1, pytest.param(1, marks=pytest.mark.xfail(reason="third one"))])
def test_dupes(v):
    pass

@pytest.mark.parametrize("v", ["a", "a", pytest.param("a", marks=pytest.mark.xfail(reason="third a"))])
def test_dupes_text(v):
    pass

@pytest.mark.parametrize("v", [-1, pytest.param(-2, marks=pytest.mark.xfail(reason="minus two")), "é", pytest.param("ü\n", marks=pytest.mark.xfail(reason="escaped"))])
def test_negative_and_escaped(v):
    pass

@pytest.mark.parametrize(("a", "b"), [((1, 2), 3), pytest.param((4, 5), 6, marks=[pytest.mark.xfail(reason="tuple")])])
def test_tuples(a, b):
    pass

@pytest.mark.parametrize("x", [None, True, pytest.param(False, marks=pytest.mark.xfail(reason="false"))], ids=["n", None, None])
def test_partial_ids(x):
    pass

@pytest.mark.parametrize("v", [A, pytest.param(B, marks=pytest.mark.xfail(reason="variable"))])
def test_variables(v):
    pass

@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.xfail(reason="first")), pytest.param(2, marks=pytest.mark.xfail(reason="second"))], ids=lambda v: f"v{v}")
def test_id_function(x):
    pass
"#;

#[test]
fn ids_as_pytest_makes_them() {
    let reason = |name: &str| {
        find_xfail(IDS_FILE, &NodeId::parse(name, None)).and_then(|marker| marker.reason)
    };
    assert_eq!(reason("test_dupes[1_2]").as_deref(), Some("third one"));
    assert_eq!(reason("test_dupes[1_0]"), None);
    assert_eq!(reason("test_dupes_text[a2]").as_deref(), Some("third a"));
    assert_eq!(reason("test_dupes_text[a1]"), None);
    assert_eq!(
        reason("test_negative_and_escaped[-2]").as_deref(),
        Some("minus two")
    );
    assert_eq!(reason("test_negative_and_escaped[-1]"), None);
    assert_eq!(
        reason("test_negative_and_escaped[\\xfc\\n]").as_deref(),
        Some("escaped")
    );
    assert_eq!(reason("test_negative_and_escaped[\\xe9]"), None);
    assert_eq!(reason("test_tuples[a1-6]").as_deref(), Some("tuple"));
    assert_eq!(reason("test_tuples[a0-3]"), None);
    assert_eq!(reason("test_partial_ids[False]").as_deref(), Some("false"));
    assert_eq!(reason("test_partial_ids[n]"), None);
    assert_eq!(reason("test_partial_ids[True]"), None);
    // Ids that cannot be told statically: the only xfail param, else the first.
    assert_eq!(reason("test_variables[7]").as_deref(), Some("variable"));
    assert_eq!(reason("test_id_function[v2]").as_deref(), Some("first"));
}

#[test]
fn module_parametrize_stacks_with_the_function_s() {
    let source = r#"import pytest
pytestmark = pytest.mark.parametrize("mod", [0, pytest.param(9, marks=pytest.mark.xfail(reason="module param"))])

@pytest.mark.parametrize("inner", ["p", pytest.param("q", marks=pytest.mark.xfail(reason="inner q"))])
def test_stacked(mod, inner):
    pass
"#;
    let reason = |name: &str| {
        find_xfail(source, &NodeId::parse(name, None)).map(|marker| (marker.reason, marker.scope))
    };
    let param = |reason: &str| Some((Some(reason.to_owned()), MarkerScope::Param));
    assert_eq!(reason("test_stacked[p-9]"), param("module param"));
    assert_eq!(reason("test_stacked[q-0]"), param("inner q"));
    assert_eq!(reason("test_stacked[q-9]"), param("inner q"));
    assert_eq!(reason("test_stacked[p-0]"), None);
}

#[test]
fn a_function_decorator_wins_over_a_param_as_in_pytest() {
    // pytest 9.2 ran this case as a non-strict XPASS "function wins".
    assert_eq!(
        find("test_function_over_param[1]", None),
        Some(marker(
            "reason=\"function wins\"",
            MarkerScope::Function,
            Some(false),
            Some("function wins")
        ))
    );
}

#[test]
fn class_parametrize_and_class_marks_in_pytest_order() {
    let param = marker("reason=\"34\"", MarkerScope::Param, None, Some("34"));
    assert_eq!(find("test_m[3-4]", Some("TestParamClass")), Some(param));
    // The body's pytestmark comes before the class decorators.
    let body = marker(
        "reason=\"class body\"",
        MarkerScope::Class,
        None,
        Some("class body"),
    );
    assert_eq!(find("test_m[1-2]", Some("TestParamClass")), Some(body));
}

#[test]
fn marks_inside_a_parametrize_are_not_the_module_s() {
    let source = "pytestmark = pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.xfail)])\n\
                  def test_a(x):\n    pass\n";
    let found = find_xfail(source, &NodeId::parse("test_a[1]", None)).unwrap();
    assert_eq!(found.scope, MarkerScope::Param);
    assert_eq!(find_xfail(source, &NodeId::parse("test_a", None)), None);
}

#[test]
fn stacked_parametrize_ids_match_by_part() {
    let source = r#"
@pytest.mark.parametrize("dtype", ["fp16", pytest.param("fp8", marks=pytest.mark.xfail)])
@pytest.mark.parametrize("n", [1, 2])
def test_stacked(dtype, n):
    pass
"#;
    let node = NodeId::parse("test_stacked[2-fp8]", None);
    let found = find_xfail(source, &node).unwrap();
    assert_eq!((found.line, found.scope), (2, MarkerScope::Param));
    assert_eq!(
        find_xfail(source, &NodeId::parse("test_stacked[2-fp16]", None)),
        None
    );
}

#[test]
fn class_markers_from_the_innermost_class() {
    let inner = marker(
        "reason=\"inner class\"",
        MarkerScope::Class,
        Some(true),
        Some("inner class"),
    );
    assert_eq!(find("test_inner", Some("TestInner")), Some(inner.clone()));
    assert_eq!(find("test_inner", Some("TestOuter.TestInner")), Some(inner));
    let outer = marker(
        "reason=\"outer class\"",
        MarkerScope::Class,
        None,
        Some("outer class"),
    );
    assert_eq!(find("test_outer", Some("TestOuter")), Some(outer.clone()));
    // Nested helpers are not tests; an inherited test is marked by its class.
    assert_eq!(
        find("test_nested_helper", Some("TestOuter")),
        Some(outer.clone())
    );
    assert_eq!(find("test_inherited", Some("TestOuter")), Some(outer));
    // A class of the same method name elsewhere has none of its own.
    assert_eq!(
        find("test_outer", Some("TestOther")).map(|m| m.scope),
        Some(MarkerScope::Module)
    );
    // TestInner is not a class of TestOther.
    assert_eq!(
        find("test_inner", Some("TestOther.TestInner")).map(|m| m.scope),
        Some(MarkerScope::Module)
    );
}

#[test]
fn module_pytestmark() {
    let module = marker(
        "module wide",
        MarkerScope::Module,
        None,
        Some("module wide"),
    );
    assert_eq!(find("test_plain", None), Some(module.clone()));
    assert_eq!(find("test_not_in_the_file", None), Some(module));
    let single =
        "import pytest\npytestmark = pytest.mark.xfail(strict=False)\ndef test_a():\n    pass\n";
    assert_eq!(
        find_xfail(single, &NodeId::parse("test_a", None)),
        Some(XfailMarker {
            line: 2,
            scope: MarkerScope::Module,
            strict: Some(false),
            reason: None
        })
    );
}

#[test]
fn nothing_marked() {
    let source = "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    x = 'pytest.mark.xfail'\n";
    assert_eq!(find_xfail(source, &NodeId::parse("test_a", None)), None);
    assert_eq!(find_xfail("", &NodeId::parse("test_a", None)), None);
    // A marker whose name only contains xfail is not one.
    let lookalike = "@pytest.mark.xfail_later\ndef test_a():\n    pass\n";
    assert_eq!(find_xfail(lookalike, &NodeId::parse("test_a", None)), None);
}

#[test]
fn later_definitions_win_and_nearest_decorator_first() {
    let source = "\
@pytest.mark.xfail(reason='top')
@pytest.mark.xfail(reason='nearest')
def test_a():
    pass

def test_b():
    pass

@pytest.mark.xfail(reason='redefined')
def test_b():
    pass
";
    let a = find_xfail(source, &NodeId::parse("test_a", None)).unwrap();
    assert_eq!((a.line, a.reason.as_deref()), (2, Some("nearest")));
    let b = find_xfail(source, &NodeId::parse("test_b", None)).unwrap();
    assert_eq!(b.reason.as_deref(), Some("redefined"));
}

#[test]
fn node_ids_parse() {
    assert_eq!(
        NodeId::parse("test_x[a-1]", Some("TestX")),
        NodeId {
            class: Some("TestX".into()),
            function: "test_x".into(),
            param_id: Some("a-1".into()),
        }
    );
    let nested = NodeId::parse("test_y[a[0]]", None);
    assert_eq!(
        (nested.function.as_str(), nested.param_id.as_deref()),
        ("test_y", Some("a[0]"))
    );
    assert_eq!(NodeId::parse("test_z", Some("")).class, None);
    assert_eq!(NodeId::parse("[odd]", None).function, "[odd]");
    assert_eq!(
        NodeId::parse("test_b", Some("tests/test_x.py::TestA::TestB"))
            .class
            .as_deref(),
        Some("TestA.TestB")
    );
    assert_eq!(
        NodeId::parse("test_c[é]", None).param_id.as_deref(),
        Some("é")
    );
}

#[test]
fn scopes_serialize_in_kebab_case() {
    let json =
        serde_json::to_string(&marker("module wide", MarkerScope::Module, None, None)).unwrap();
    assert!(json.contains("\"scope\":\"module\""), "{json}");
}

#[test]
fn never_panics_on_any_prefix_or_random_bytes() {
    let nodes = [
        NodeId::parse("test_params[amd]", None),
        NodeId::parse("test_inner", Some("TestOuter.TestInner")),
        NodeId::parse("test_plain", None),
    ];
    for end in (0..=TEST_FILE.len()).filter(|&end| TEST_FILE.is_char_boundary(end)) {
        for node in &nodes {
            let _ = find_xfail(&TEST_FILE[..end], node);
        }
    }
    let alphabet =
        b"@pytest.mark.xfail(param[]=,)\n    def class test_a pytestmark ' \" ids id marks";
    let mut state = 0x853c_49e6_748f_ea9b_u64;
    for _ in 0..3000 {
        let len = (xorshift(&mut state) % 300) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = xorshift(&mut state);
                if r.is_multiple_of(7) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        for node in &nodes {
            let _ = find_xfail(&text, node);
        }
    }
}

#[test]
fn large_parametrize_lists_stay_linear() {
    let entries = vec!["1"; 200_000].join(", ");
    let source = format!(
        "@pytest.mark.parametrize('v', [{entries}, pytest.param(2, marks=pytest.mark.xfail)])\n\
         def test_a(v):\n    pass\n"
    );
    let found = find_xfail(&source, &NodeId::parse("test_a[2]", None)).unwrap();
    assert_eq!(found.scope, MarkerScope::Param);
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
