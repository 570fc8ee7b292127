//! The optimizer: equality saturation with egg.
//!
//! A function becomes an e-graph ([`lang`]): every value an e-class, typed
//! by Kiln's inference. The rules of [`rules`] add equal terms (never a
//! different result, bit for bit), within limits on e-nodes, iterations and
//! time; the e-graph's hash-consing is common-subexpression elimination for
//! free. [`extract`] then picks the cheapest equal program by the memory
//! traffic it causes, counting shared values once, and it becomes IR again:
//! typed by inference, laid out again, its results keeping the strides
//! they had. Whatever stops it (saturation or a limit), the result is a
//! valid, verified program, and the pass reports why it stopped.
//!
//! With explanations on, each change of a result comes with the chain of
//! rules that justified it (`kiln dump --after optimize --explain`).

pub mod extract;
pub mod fold;
pub mod lang;
pub mod rules;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use egg::{Id, RecExpr};
use kiln_ir::graph::{Func, FuncBuilder, NewInst, Operand, ValueDef, ValueId};
use kiln_ir::infer::{Arg, InferCtx, infer};
use kiln_ir::{Error, ErrorKind, Result, TensorType, TypeLayout};

use crate::manager::{Pass, PassCx};
use crate::rewrite::restore_result_layouts;
pub use fold::{ConstantFolder, FoldArg};
use lang::{KGraph, KNode, NodeOp, OpKey, Typing};
use rules::{Cx, Rule, Term, rules};

/// Limits and options of the optimizer.
#[derive(Clone)]
pub struct OptimizeConfig {
    /// Stop adding terms beyond this many e-nodes.
    pub node_limit: usize,
    /// At most this many rounds of rules.
    pub iter_limit: usize,
    /// Stop after this long.
    pub time_limit: Duration,
    /// Record why each result changed.
    pub explain: bool,
    /// Constant folding's arithmetic (none: no folding).
    pub fold: Option<Arc<dyn ConstantFolder>>,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        OptimizeConfig {
            node_limit: 20_000,
            iter_limit: 16,
            time_limit: Duration::from_millis(200),
            explain: false,
            fold: None,
        }
    }
}

impl fmt::Debug for OptimizeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptimizeConfig")
            .field("node_limit", &self.node_limit)
            .field("iter_limit", &self.iter_limit)
            .field("time_limit", &self.time_limit)
            .field("explain", &self.explain)
            .field("fold", &self.fold.is_some())
            .finish()
    }
}

/// Why the rules stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// No rule adds anything new: every equal term the rules know is there.
    Saturated,
    IterationLimit,
    NodeLimit,
    TimeLimit,
}

/// What one run of the optimizer did.
#[derive(Clone, Debug)]
pub struct Report {
    pub function: String,
    pub iterations: usize,
    pub nodes: usize,
    pub classes: usize,
    pub stop: StopReason,
    /// Rules that added an equality, and how often.
    pub applied: BTreeMap<&'static str, usize>,
    pub elapsed: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stop = match self.stop {
            StopReason::Saturated => "saturated",
            StopReason::IterationLimit => "stopped at the iteration limit",
            StopReason::NodeLimit => "stopped at the e-node limit",
            StopReason::TimeLimit => "stopped at the time limit",
        };
        write!(
            f,
            "optimize @{}: {stop} after {} iterations, {} e-nodes in {} e-classes, {:.3} ms",
            self.function,
            self.iterations,
            self.nodes,
            self.classes,
            self.elapsed.as_secs_f64() * 1e3
        )?;
        if !self.applied.is_empty() {
            let rules: Vec<String> = self
                .applied
                .iter()
                .map(|(r, n)| format!("{r} ×{n}"))
                .collect();
            write!(f, "; rules: {}", rules.join(", "))?;
        }
        Ok(())
    }
}

/// The optimizer as a pass.
pub struct OptimizePass {
    config: OptimizeConfig,
    notes: Mutex<Vec<String>>,
}

impl OptimizePass {
    pub fn new(config: OptimizeConfig) -> OptimizePass {
        OptimizePass {
            config,
            notes: Mutex::new(Vec::new()),
        }
    }
}

impl Pass for OptimizePass {
    fn name(&self) -> &'static str {
        "optimize"
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        if func.name.is_empty() {
            return Ok(());
        }
        let original = func.clone();
        // The strides each result must keep.
        let wanted: Vec<Option<Vec<i64>>> = func
            .returns
            .iter()
            .map(|r| func.ty(*r).strides().map(<[i64]>::to_vec))
            .collect();
        let (optimized, report, explanations) = optimize(func, &cx.ctx, &self.config)?;
        let mut notes = vec![report.to_string()];
        notes.extend(explanations);
        *func = optimized;
        if cx.laid_out() {
            crate::layout::lay_out(func, &cx.ctx)?;
            restore_result_layouts(func, &cx.ctx, &wanted)?;
            // A result that is a view with overlapping strides (an expand)
            // cannot be copied back into its layout: such a function keeps
            // its original form.
            let kept = func.returns.iter().zip(&wanted).all(|(r, w)| {
                w.as_deref()
                    .is_none_or(|w| func.ty(*r).strides() == Some(w))
            });
            if !kept {
                notes.push(format!(
                    "optimize @{}: undone, a result's layout (a view) would change",
                    func.name
                ));
                *func = original;
            }
        }
        if let Ok(mut n) = self.notes.lock() {
            n.extend(notes);
        }
        Ok(())
    }

    fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

/// The type a term will have (`None` inside for literals); `None` when
/// inference rejects it.
fn term_type(g: &KGraph, term: &Term, ctx: &InferCtx) -> Option<Option<TensorType>> {
    match term {
        Term::Class(id) => Some(g[*id].data.ty.clone()),
        Term::Lit(_) => Some(None),
        Term::Node(op, children) => {
            let types: Vec<(Option<TensorType>, Option<kiln_ir::Scalar>)> = children
                .iter()
                .map(|c| match c {
                    Term::Lit(s) => Some((None, Some(*s))),
                    Term::Class(id) => Some((g[*id].data.ty.clone(), g[*id].data.literal)),
                    node => term_type(g, node, ctx).map(|t| (t, None)),
                })
                .collect::<Option<_>>()?;
            let args: Vec<Arg> = types
                .iter()
                .map(|(t, s)| match (t, s) {
                    (Some(t), _) => Some(Arg::Tensor(t)),
                    (None, Some(s)) => Some(Arg::Scalar(*s)),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            let inferred = infer(op, &args, None, ctx).ok()?;
            match inferred.results.len() {
                1 => Some(inferred.results.into_iter().next()),
                _ => None,
            }
        }
    }
}

fn add_term(g: &mut KGraph, term: &Term) -> Id {
    match term {
        Term::Class(id) => *id,
        Term::Lit(s) => g.add(KNode::lit(*s)),
        Term::Node(op, children) => {
            let ids = children.iter().map(|c| add_term(g, c)).collect();
            g.add(KNode::inst(op.clone(), ids))
        }
    }
}

/// Runs the rules on `func`, extracts the cheapest equal function.
pub fn optimize(
    func: &Func,
    ctx: &InferCtx,
    config: &OptimizeConfig,
) -> Result<(Func, Report, Vec<String>)> {
    // egg times its rebuilds with `quanta`, whose first reading of the
    // clock calibrates the TSC by spinning for up to 200 ms (on a busy
    // virtual machine, all of it: a first compile took 200 ms, the next
    // 0.1). This pass keeps its time limit with std's clock and reads none
    // of egg's timings, so egg gets a mock clock on this thread.
    let (clock, _mock) = quanta::Clock::mock();
    quanta::with_clock(&clock, || optimize_egraph(func, ctx, config))
}

/// [`optimize`], on whatever clock egg has.
fn optimize_egraph(
    func: &Func,
    ctx: &InferCtx,
    config: &OptimizeConfig,
) -> Result<(Func, Report, Vec<String>)> {
    let start = Instant::now();
    let typing = Typing {
        ctx: *ctx,
        params: func
            .params
            .iter()
            .map(|p| func.ty(*p).clone().with_layout(TypeLayout::Unspecified))
            .collect(),
    };
    let mut g = KGraph::new(typing);
    if config.explain {
        g = g.with_explanations_enabled();
    }
    // The function as a term per value (also the "before" of explanations).
    let mut original = RecExpr::default();
    let mut term_of: Vec<Option<Id>> = vec![None; func.values.len()];
    let mut class_of: Vec<Option<Id>> = vec![None; func.values.len()];
    for (i, &p) in func.params.iter().enumerate() {
        let node = KNode {
            op: NodeOp::Param(i as u32, func.name_of(p).into()),
            children: vec![],
        };
        class_of[p.index()] = Some(g.add(node.clone()));
        term_of[p.index()] = Some(original.add(node));
    }
    for inst in &func.insts {
        let mut classes = Vec::new();
        let mut terms = Vec::new();
        for o in &inst.operands {
            match o {
                Operand::Value(v) => {
                    classes.push(class_of[v.index()].expect("operands come first"));
                    terms.push(term_of[v.index()].expect("operands come first"));
                }
                Operand::Scalar(s) => {
                    classes.push(g.add(KNode::lit(*s)));
                    terms.push(original.add(KNode::lit(*s)));
                }
                Operand::None => {
                    classes.push(g.add(KNode::absent()));
                    terms.push(original.add(KNode::absent()));
                }
            }
        }
        let key = NodeOp::Inst(OpKey::new(inst.op.clone(), inst.out_dtype));
        let class = g.add(KNode {
            op: key.clone(),
            children: classes,
        });
        let term = original.add(KNode {
            op: key,
            children: terms,
        });
        if let [r] = inst.results.as_slice() {
            class_of[r.index()] = Some(class);
            term_of[r.index()] = Some(term);
        } else {
            for (k, r) in inst.results.iter().enumerate() {
                class_of[r.index()] = Some(g.add(KNode::result(k, class)));
                term_of[r.index()] = Some(original.add(KNode::result(k, term)));
            }
        }
    }
    g.rebuild();

    let rules = rules();
    let mut applied: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut iterations = 0;
    let stop = loop {
        if iterations >= config.iter_limit {
            break StopReason::IterationLimit;
        }
        if start.elapsed() >= config.time_limit {
            break StopReason::TimeLimit;
        }
        if g.total_size() >= config.node_limit {
            break StopReason::NodeLimit;
        }
        iterations += 1;
        let proposals = search(&g, &rules, config);
        let mut changed = false;
        for (rule, class, term) in proposals {
            if g.total_size() >= config.node_limit {
                break;
            }
            let want = g[class].data.ty.clone();
            if want.is_none() || term_type(&g, &term, ctx) != Some(want) {
                continue;
            }
            let id = add_term(&mut g, &term);
            if g.union_trusted(id, class, rule) {
                *applied.entry(rule).or_default() += 1;
                changed = true;
            }
        }
        g.rebuild();
        if !changed {
            break StopReason::Saturated;
        }
    };

    let roots: Vec<Id> = func
        .returns
        .iter()
        .map(|r| g.find(class_of[r.index()].expect("returned values exist")))
        .collect();
    // A result that is a view keeps being that view (its strides, which can
    // alias and overlap, are part of the result); other results get their
    // strides back after extraction.
    let mut pinned = HashMap::new();
    for (r, &root) in func.returns.iter().zip(&roots) {
        if let Some(inst) = func.def_inst(*r).filter(|i| i.op.is_view()) {
            if let Some(node) = node_in(&g, root, inst) {
                pinned.insert(root, node);
            }
        }
    }
    let choice = extract::extract(&g, &roots, &pinned);
    let optimized = rebuild(func, ctx, &g, &choice, &class_of, &roots)?;
    let report = Report {
        function: func.name.clone(),
        iterations,
        nodes: g.total_size(),
        classes: g.number_of_classes(),
        stop,
        applied,
        elapsed: start.elapsed(),
    };
    let mut explanations = Vec::new();
    if config.explain {
        for (r, &root) in func.returns.iter().zip(&roots) {
            let before = subterm(&original, term_of[r.index()].expect("a term"));
            let after = chosen_term(&g, &choice, root);
            // egg writes terms as trees: a value used twice is written
            // twice, so a long program's terms grow exponentially.
            let size = tree_size(&before).max(tree_size(&after));
            if size > EXPLAINED_TERM_LIMIT {
                explanations.push(format!(
                    "%{} is not explained: written as a tree, its term has more than {EXPLAINED_TERM_LIMIT} nodes",
                    func.name_of(*r)
                ));
            } else if before.to_string() != after.to_string() {
                let mut e = g.explain_equivalence(&before, &after);
                explanations.push(format!(
                    "%{} is rewritten by these steps:\n{}",
                    func.name_of(*r),
                    e.get_flat_string()
                ));
            }
        }
    }
    Ok((optimized, report, explanations))
}

/// The largest term (counted as a tree) an explanation is printed for.
const EXPLAINED_TERM_LIMIT: usize = 2_000;

/// The number of nodes of `expr` written as a tree, saturating.
fn tree_size(expr: &RecExpr<KNode>) -> usize {
    let mut sizes: Vec<usize> = Vec::with_capacity(expr.as_ref().len());
    for node in expr.as_ref() {
        let children = node
            .children
            .iter()
            .fold(0usize, |n, c| n.saturating_add(sizes[usize::from(*c)]));
        sizes.push(children.saturating_add(1));
    }
    sizes.last().copied().unwrap_or(0)
}

/// The node of e-class `class` with an original instruction's op.
fn node_in(g: &KGraph, class: Id, inst: &kiln_ir::Inst) -> Option<KNode> {
    let key = NodeOp::Inst(OpKey::new(inst.op.clone(), inst.out_dtype));
    g[class].nodes.iter().find(|n| n.op == key).cloned()
}

/// Every rule on every e-class.
fn search(g: &KGraph, rules: &[Rule], config: &OptimizeConfig) -> Vec<(&'static str, Id, Term)> {
    let cx = Cx {
        g,
        fold: config.fold.as_deref(),
    };
    let mut out = Vec::new();
    for class in g.classes() {
        for rule in rules {
            for term in (rule.find)(&cx, class.id) {
                out.push((rule.name, class.id, term));
            }
        }
    }
    out
}

/// The sub-expression of `expr` rooted at `root`, as its own expression.
fn subterm(expr: &RecExpr<KNode>, root: Id) -> RecExpr<KNode> {
    let mut out = RecExpr::default();
    let mut map: HashMap<Id, Id> = HashMap::new();
    fn go(
        expr: &RecExpr<KNode>,
        id: Id,
        out: &mut RecExpr<KNode>,
        map: &mut HashMap<Id, Id>,
    ) -> Id {
        if let Some(&m) = map.get(&id) {
            return m;
        }
        let mut node = expr[id].clone();
        for c in node.children.iter_mut() {
            *c = go(expr, *c, out, map);
        }
        let new = out.add(node);
        map.insert(id, new);
        new
    }
    go(expr, root, &mut out, &mut map);
    out
}

/// The extracted expression of an e-class.
fn chosen_term(g: &KGraph, choice: &HashMap<Id, KNode>, root: Id) -> RecExpr<KNode> {
    let mut out = RecExpr::default();
    let mut map: HashMap<Id, Id> = HashMap::new();
    fn go(
        g: &KGraph,
        choice: &HashMap<Id, KNode>,
        id: Id,
        out: &mut RecExpr<KNode>,
        map: &mut HashMap<Id, Id>,
    ) -> Id {
        let id = g.find(id);
        if let Some(&m) = map.get(&id) {
            return m;
        }
        let mut node = choice[&id].clone();
        for c in node.children.iter_mut() {
            *c = go(g, choice, *c, out, map);
        }
        let new = out.add(node);
        map.insert(id, new);
        new
    }
    go(g, choice, root, &mut out, &mut map);
    out
}

/// The extracted program as a function: instructions in dependency order,
/// original names kept where an e-class still holds an original value.
fn rebuild(
    func: &Func,
    ctx: &InferCtx,
    g: &KGraph,
    choice: &HashMap<Id, KNode>,
    class_of: &[Option<Id>],
    roots: &[Id],
) -> Result<Func> {
    let mut b = FuncBuilder::new(func.name.clone(), *ctx);
    b.reserve_names(func.values.iter().map(|v| v.name.as_str()));
    if let Some(loc) = &func.location {
        b.set_location(loc.clone());
    }
    let mut value: HashMap<Id, ValueId> = HashMap::new();
    for &p in &func.params {
        let v = b.param(Some(func.name_of(p)), func.ty(p).clone())?;
        value.insert(g.find(class_of[p.index()].expect("params have classes")), v);
    }
    // The original value each e-class holds, for its name and location.
    let mut origin: HashMap<Id, ValueId> = HashMap::new();
    for (i, c) in class_of.iter().enumerate() {
        if let (Some(c), ValueDef::Inst { .. }) = (c, func.values[i].def) {
            origin.entry(g.find(*c)).or_insert(ValueId(i as u32));
        }
    }
    let mut emitter = Emitter {
        g,
        func,
        choice,
        origin,
        value,
        tuples: HashMap::new(),
        used: std::collections::HashSet::new(),
        b,
    };
    let mut returns = Vec::with_capacity(roots.len());
    for &r in roots {
        match emitter.emit(r)? {
            Operand::Value(v) => returns.push(v),
            _ => {
                return Err(Error::new(
                    ErrorKind::Backend,
                    "optimize: a result became a literal",
                ));
            }
        }
    }
    let declared = func
        .result_types
        .iter()
        .map(|t| t.clone().with_layout(TypeLayout::Unspecified))
        .collect();
    emitter.b.finish(returns, Some(declared))
}

/// Emits chosen e-nodes as instructions, each e-class once.
struct Emitter<'a> {
    g: &'a KGraph,
    func: &'a Func,
    choice: &'a HashMap<Id, KNode>,
    origin: HashMap<Id, ValueId>,
    value: HashMap<Id, ValueId>,
    /// The results of emitted instructions with several, by e-class.
    tuples: HashMap<Id, Vec<ValueId>>,
    used: std::collections::HashSet<String>,
    b: FuncBuilder,
}

impl Emitter<'_> {
    fn node(&self, id: Id) -> Result<&KNode> {
        self.choice.get(&id).ok_or_else(|| {
            Error::new(
                ErrorKind::Backend,
                "optimize: an e-class has no extracted node",
            )
        })
    }

    /// The name an original value of class `id` had, if still free.
    fn name_of(&mut self, id: Id) -> Option<String> {
        let original = self.origin.get(&id).copied()?;
        let name = self.func.name_of(original).to_string();
        self.used.insert(name.clone()).then_some(name)
    }

    /// The operand standing for e-class `id`.
    fn emit(&mut self, id: Id) -> Result<Operand> {
        let id = self.g.find(id);
        let data = &self.g[id].data;
        if let Some(s) = data.literal {
            return Ok(Operand::Scalar(s));
        }
        if data.absent {
            return Ok(Operand::None);
        }
        if let Some(v) = self.value.get(&id) {
            return Ok(Operand::Value(*v));
        }
        let node = self.node(id)?.clone();
        if let NodeOp::Result(k) = node.op {
            let tuple = self.emit_tuple(node.children[0])?;
            let v = *tuple
                .get(k as usize)
                .ok_or_else(|| Error::new(ErrorKind::Backend, "optimize: a result out of range"))?;
            self.value.insert(id, v);
            return Ok(Operand::Value(v));
        }
        let name = self.name_of(id);
        let vs = self.emit_inst(id, &node, name.into_iter().collect())?;
        let v = vs[0];
        self.value.insert(id, v);
        Ok(Operand::Value(v))
    }

    /// The results of the several-result instruction of e-class `id`.
    fn emit_tuple(&mut self, id: Id) -> Result<Vec<ValueId>> {
        let id = self.g.find(id);
        if let Some(vs) = self.tuples.get(&id) {
            return Ok(vs.clone());
        }
        let node = self.node(id)?.clone();
        let count = self.g[id].data.results.as_ref().map_or(0, Vec::len);
        let mut names = Vec::with_capacity(count);
        for k in 0..count {
            let class = self.g.lookup(KNode::result(k, id));
            names.push(class.and_then(|c| self.name_of(c)));
        }
        let names = if names.iter().all(Option::is_some) {
            names.into_iter().flatten().collect()
        } else {
            Vec::new()
        };
        let vs = self.emit_inst(id, &node, names)?;
        self.tuples.insert(id, vs.clone());
        Ok(vs)
    }

    fn emit_inst(&mut self, id: Id, node: &KNode, names: Vec<String>) -> Result<Vec<ValueId>> {
        let NodeOp::Inst(key) = &node.op else {
            return Err(Error::new(
                ErrorKind::Backend,
                "optimize: a parameter was not placed",
            ));
        };
        let mut operands = Vec::with_capacity(node.children.len());
        for c in &node.children {
            operands.push(self.emit(*c)?);
        }
        let location = self
            .origin
            .get(&id)
            .and_then(|v| self.func.def_inst(*v))
            .and_then(|i| i.location.clone());
        self.b.push_full(
            NewInst::new((*key.op).clone(), operands)
                .out_dtype(key.out_dtype)
                .names(names)
                .location(location),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PassManager;

    /// The body of `@main` after the standard pipeline (optimizer included).
    fn optimized(text: &str) -> String {
        let mut m = kiln_ir::parse_module("t.kir", text, kiln_ir::DefaultDType::F32).unwrap();
        PassManager::standard().run(&mut m).unwrap();
        let mut body: Vec<String> = m.to_string().lines().skip(1).map(str::to_string).collect();
        body.pop();
        body.join("\n")
    }

    fn program(sig: &str, body: &str) -> String {
        format!("func @main({sig} {{\n{body}\n}}\n")
    }

    #[test]
    fn identities_that_hold_are_applied() {
        let out = optimized(&program(
            "%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>)",
            "  %a = mul %x, 1.0\n  %b = div %x, 1\n  %c = add %i, 0\n  %n = neg %x\n  %d = neg %n\n  return %a, %b, %c, %d",
        ));
        assert_eq!(out, "  return %x, %x, %i, %x", "{out}");
    }

    #[test]
    fn identities_that_fail_on_signed_zeros_nan_or_complex_are_not() {
        // x + 0.0 turns -0.0 into 0.0; x * 0 is NaN for inf; complex x * 1
        // computes b·0; x - (-0.0) turns -0.0 into 0.0.
        let out = optimized(&program(
            "%x: tensor<4xf32>, %z: tensor<4xc64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xc64>, tensor<4xf32>)",
            "  %a = add %x, 0.0\n  %b = mul %x, 0\n  %c = mul %z, 1.0\n  %d = sub %x, -0.0\n  return %a, %b, %c, %d",
        ));
        for kept in ["add %x, 0.0", "mul %x, 0", "mul %z, 1.0", "sub %x, -0.0"] {
            assert!(out.contains(kept), "{kept} was rewritten:\n{out}");
        }
        // x + (-0.0) is x.
        let out = optimized(&program(
            "%x: tensor<4xf32>) -> tensor<4xf32>",
            "  %a = add %x, -0.0\n  return %a",
        ));
        assert_eq!(out, "  return %x");
    }

    #[test]
    fn cast_chains_shorten_only_when_lossless() {
        let out = optimized(&program(
            "%h: tensor<4xf16>, %f: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xf16>, tensor<4xf32>)",
            "  %a = cast %h {dtype = f32}\n  %b = cast %a {dtype = f64}\n  %c = cast %a {dtype = f16}\n  %d = cast %f {dtype = f16}\n  %e = cast %d {dtype = f32}\n  return %b, %c, %e",
        ));
        assert!(out.contains("cast %h {dtype = f64}"), "{out}");
        assert!(
            out.contains("return %b, %h, %e"),
            "f16 -> f32 -> f16 is the identity:\n{out}"
        );
        assert!(
            out.contains("cast %f {dtype = f16}") && out.contains("cast %d {dtype = f32}"),
            "f32 -> f16 -> f32 rounds:\n{out}"
        );
    }

    #[test]
    fn view_chains_fold_and_views_move_for_fusion() {
        let out = optimized(&program(
            "%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<24xf32>, tensor<4x3xf32>)",
            "  %p = permute %x {dims = [2, 0, 1]}\n  %q = permute %p {dims = [1, 2, 0]}\n  %r = reshape %x {shape = [6, 4]}\n  %s = reshape %r {shape = [24]}\n  %e = exp %x\n  %t = permute %e {dims = [0, 2, 1]}\n  %u = sum %t {dims = [0]}\n  return %q, %s, %u",
        ));
        assert!(
            out.contains("return %x,"),
            "permute∘permute is the identity:\n{out}"
        );
        assert!(out.contains("reshape %x {shape = [24]}"), "{out}");
        // exp then permute would materialize exp's result for the view: the
        // view moves under the exp and the sum fuses with it.
        assert!(
            out.contains("exp %") && !out.contains("permute %e"),
            "{out}"
        );
    }

    #[test]
    fn repeated_bounds_are_absorbed_but_not_swapped_ones() {
        let out = optimized(&program(
            "%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)",
            "  %m = maximum %x, %y\n  %a = maximum %m, %y\n  %n = minimum %x, %y\n  %b = minimum %x, %n\n  %c = maximum %m, %x\n  return %a, %b, %c",
        ));
        assert!(out.contains("return %m, %n, %c"), "{out}");
    }

    #[test]
    fn casts_to_the_same_dtype_and_chained_expands_go() {
        let out = optimized(&program(
            "%x: tensor<3xf32>, %i: tensor<3xf32>) -> (tensor<3xf32>, tensor<4x2x3xf32>, tensor<3xf32>)",
            "  %a = cast %x {dtype = f32}\n  %e = expand %x {shape = [2, 3]}\n  %f = expand %e {shape = [4, 2, 3]}\n  %g = expand %x {shape = [3]}\n  return %a, %f, %g",
        ));
        assert!(out.contains("expand %x {shape = [4, 2, 3]}"), "{out}");
        assert!(
            out.contains("return %x, %") && out.ends_with(", %x"),
            "{out}"
        );
    }

    #[test]
    fn expands_that_broadcasting_does_go() {
        let out = optimized(&program(
            "%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32>",
            "  %e = expand %x {shape = [2, 3]}\n  %a = add %e, %y\n  return %a",
        ));
        assert_eq!(
            out, "  %a = add %x, %y : tensor<2x3xf32>\n  return %a",
            "{out}"
        );
        // Here the expand makes the result's shape: it stays.
        let out = optimized(&program(
            "%x: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<2x3xf32>",
            "  %e = expand %x {shape = [2, 3]}\n  %a = add %e, %z\n  return %a",
        ));
        assert!(out.contains("expand %x"), "{out}");
    }

    #[test]
    fn subtracting_zero_goes_but_not_negative_zero() {
        let out = optimized(&program(
            "%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
            "  %a = sub %x, 0.0\n  %b = sub %x, -0.0\n  return %a, %b",
        ));
        assert!(
            out.contains("sub %x, -0.0") && out.contains("return %x, %"),
            "{out}"
        );
    }

    #[test]
    fn limits_stop_with_a_reason_and_a_valid_program() {
        let text = program(
            "%x: tensor<4xf32>) -> tensor<4xf32>",
            "  %a = neg %x\n  %b = neg %a\n  %c = mul %b, 1.0\n  return %c",
        );
        for (config, reason) in [
            (
                OptimizeConfig {
                    iter_limit: 1,
                    ..Default::default()
                },
                StopReason::IterationLimit,
            ),
            (
                OptimizeConfig {
                    node_limit: 3,
                    ..Default::default()
                },
                StopReason::NodeLimit,
            ),
            (
                OptimizeConfig {
                    time_limit: Duration::ZERO,
                    ..Default::default()
                },
                StopReason::TimeLimit,
            ),
            (OptimizeConfig::default(), StopReason::Saturated),
        ] {
            let m = kiln_ir::parse_module("t.kir", &text, kiln_ir::DefaultDType::F32).unwrap();
            let (func, report, _) = optimize(m.entry().unwrap(), &m.ctx(), &config).unwrap();
            assert_eq!(report.stop, reason, "{report}");
            let out = kiln_ir::Module::single(func, kiln_ir::DefaultDType::F32);
            kiln_ir::verify::verify_module(&out).unwrap();
        }
    }

    #[test]
    fn explanations_name_the_rules_and_stay_bounded() {
        let explain = OptimizeConfig {
            explain: true,
            ..Default::default()
        };
        let text = program(
            "%x: tensor<4xf32>) -> tensor<4xf32>",
            "  %a = neg %x\n  %b = neg %a\n  %c = mul %b, 1.0\n  return %c",
        );
        let m = kiln_ir::parse_module("t.kir", &text, kiln_ir::DefaultDType::F32).unwrap();
        let (_, _, notes) = optimize(m.entry().unwrap(), &m.ctx(), &explain).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("neg-neg") && notes[0].contains("mul-one"),
            "{}",
            notes[0]
        );
        // Each step uses the previous value twice: as a tree, the term has
        // 2^64 nodes.
        let mut body = String::from("  %v0 = neg %x\n");
        for i in 1..64 {
            body += &format!("  %v{i} = maximum %v{}, %v{}\n", i - 1, i - 1);
        }
        body += "  %r = mul %v63, 1.0\n  return %r";
        let text = program("%x: tensor<4xf32>) -> tensor<4xf32>", &body);
        let m = kiln_ir::parse_module("t.kir", &text, kiln_ir::DefaultDType::F32).unwrap();
        let (_, _, notes) = optimize(m.entry().unwrap(), &m.ctx(), &explain).unwrap();
        assert_eq!(
            notes,
            ["%r is not explained: written as a tree, its term has more than 2000 nodes"]
        );
    }
}
