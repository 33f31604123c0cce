//! Just enough SVG reading for the checks: the `<text>` and `<rect>`
//! elements and their attributes, found by scanning (the writer puts each
//! element's attributes in one tag, double-quoted).

/// Where a text's glyphs lie: 0.8 em above the baseline, 0.2 below, and
/// 0.6 em per character, as the layout estimates.
#[derive(Debug)]
pub struct TextBox {
    pub class: String,
    pub text: String,
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

#[derive(Debug)]
pub struct Rect {
    pub class: String,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl TextBox {
    pub fn overlaps(&self, o: &TextBox) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

impl Rect {
    pub fn holds(&self, t: &TextBox) -> bool {
        t.x0 >= self.x && t.x1 <= self.x + self.w && t.y0 >= self.y && t.y1 <= self.y + self.h
    }

    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// The attribute string and the content of every `<tag ...>` element.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let open = format!("<{tag} ");
    let close = format!("</{tag}>");
    let mut found = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find(&open) {
        rest = &rest[start + open.len()..];
        let end = rest.find('>').expect("the tag ends");
        let attrs = rest[..end].trim_end_matches('/');
        let self_closing = rest[..end].ends_with('/');
        rest = &rest[end + 1..];
        let content = if self_closing {
            ""
        } else {
            let stop = rest.find(&close).expect("the element is closed");
            &rest[..stop]
        };
        found.push((attrs, content));
    }
    found
}

/// The value of attribute `name`, matched only as a whole name (so
/// `width` does not find `stroke-width`).
fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let mut from = 0;
    while let Some(i) = attrs[from..].find(&key) {
        let at = from + i;
        if at == 0 || attrs.as_bytes()[at - 1] == b' ' {
            let rest = &attrs[at + key.len()..];
            return rest.find('"').map(|end| &rest[..end]);
        }
        from = at + 1;
    }
    None
}

fn number(attrs: &str, name: &str) -> f64 {
    attr(attrs, name)
        .unwrap_or_else(|| panic!("no {name} in {attrs}"))
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number in {attrs}"))
}

pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

pub fn texts(svg: &str) -> Vec<TextBox> {
    elements(svg, "text")
        .into_iter()
        .map(|(attrs, content)| {
            assert_eq!(attr(attrs, "text-anchor"), Some("start"), "{attrs}");
            let (x, y, size) = (
                number(attrs, "x"),
                number(attrs, "y"),
                number(attrs, "font-size"),
            );
            let text = unescape(content);
            let chars = text.chars().count() as f64;
            TextBox {
                class: attr(attrs, "class").unwrap_or_default().to_string(),
                x0: x,
                y0: y - size * 0.8,
                x1: x + chars * 0.6 * size,
                y1: y + size * 0.2,
                text,
            }
        })
        .collect()
}

pub fn rects(svg: &str) -> Vec<Rect> {
    elements(svg, "rect")
        .into_iter()
        .map(|(attrs, _)| Rect {
            class: attr(attrs, "class").unwrap_or_default().to_string(),
            x: number(attrs, "x"),
            y: number(attrs, "y"),
            w: number(attrs, "width"),
            h: number(attrs, "height"),
        })
        .collect()
}

/// The root's width and height, checked against its viewBox.
pub fn root_size(svg: &str) -> (f64, f64) {
    let (attrs, _) = elements(svg, "svg")[0];
    let (w, h) = (number(attrs, "width"), number(attrs, "height"));
    assert_eq!(
        attr(attrs, "viewBox"),
        Some(format!("0 0 {w} {h}").as_str())
    );
    (w, h)
}
