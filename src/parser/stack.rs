//! The persistent LR stack: an immutable, `Rc`-linked list of parse states,
//! top first. Cloning a [`PStack`] is O(1) (one refcount increment); pushing
//! allocates one node; popping only moves the top pointer. Branches that are
//! no longer referenced are freed as soon as the last [`PStack`] pointing into
//! them is dropped, so a long-lived parser that keeps cloning and consuming
//! does not grow memory beyond what its live clones share.
//!
//! Dropping a very deep stack is iterative (no recursion through `Drop`).
//!
//! Single-threaded by design (`Rc`), which is what wasm32 needs.

use std::rc::Rc;

/// One stack entry: a parse state and the rest of the stack below it.
#[derive(Debug)]
pub struct Node {
    state: u32,
    /// Number of nodes from this one down to the bottom, inclusive (>= 1).
    depth: u32,
    parent: Option<Rc<Node>>,
}

impl Node {
    #[inline]
    pub fn state(&self) -> u32 {
        self.state
    }
    #[inline]
    pub fn depth(&self) -> usize {
        self.depth as usize
    }
    /// The node below this one (`None` at the bottom).
    #[inline]
    pub fn parent(&self) -> Option<&Node> {
        self.parent.as_deref()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // Unlink iteratively: keep taking the parent while we hold its last
        // reference, so a long chain is freed in a loop, not by recursion.
        let mut cur = self.parent.take();
        while let Some(rc) = cur {
            match Rc::into_inner(rc) {
                Some(mut node) => cur = node.parent.take(),
                None => break,
            }
        }
    }
}

/// A persistent stack of parse states (never empty: the bottom holds the
/// start state).
#[derive(Clone, Debug)]
pub struct PStack {
    top: Rc<Node>,
}

impl PStack {
    /// A stack holding only `bottom`.
    pub fn new(bottom: u32) -> Self {
        PStack { top: Rc::new(Node { state: bottom, depth: 1, parent: None }) }
    }

    /// The top node (borrow; walk down with [`Node::parent`]).
    #[inline]
    pub fn top(&self) -> &Node {
        &self.top
    }

    /// The state on top.
    #[inline]
    pub fn state(&self) -> u32 {
        self.top.state
    }

    /// The number of states on the stack (>= 1).
    #[inline]
    pub fn depth(&self) -> usize {
        self.top.depth as usize
    }

    pub fn push(&mut self, state: u32) {
        let depth = self.top.depth.saturating_add(1);
        let parent = Some(self.top.clone());
        self.top = Rc::new(Node { state, depth, parent });
    }

    /// Pops `n` states. Returns false (and leaves the stack unchanged) if
    /// that would remove the bottom node.
    pub fn pop_n(&mut self, n: usize) -> bool {
        if n == 0 {
            return true;
        }
        if n >= self.depth() {
            return false;
        }
        let mut node: &Rc<Node> = &self.top;
        for _ in 0..n {
            match &node.parent {
                Some(p) => node = p,
                None => return false,
            }
        }
        self.top = node.clone();
        true
    }

    /// States from top to bottom.
    pub fn states(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(&*self.top), |n| n.parent()).map(|n| n.state)
    }

    /// True when both stacks are the very same nodes (cheap identity test).
    pub fn ptr_eq(&self, other: &PStack) -> bool {
        Rc::ptr_eq(&self.top, &other.top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pop_share() {
        let mut a = PStack::new(0);
        a.push(1);
        a.push(2);
        let mut b = a.clone();
        b.push(7);
        assert!(b.pop_n(2));
        assert_eq!(b.states().collect::<Vec<_>>(), vec![1, 0]);
        assert_eq!(a.states().collect::<Vec<_>>(), vec![2, 1, 0]);
        assert!(!b.pop_n(2));
        assert_eq!(b.depth(), 2);
        assert!(b.pop_n(1));
        assert_eq!(b.state(), 0);
        assert!(!b.pop_n(1));
    }

    #[test]
    fn deep_drop_does_not_overflow() {
        let mut s = PStack::new(0);
        for i in 0..1_000_000 {
            s.push(i);
        }
        let keep = {
            let mut k = s.clone();
            assert!(k.pop_n(500_000));
            k
        };
        drop(s);
        assert_eq!(keep.depth(), 500_001);
        drop(keep);
    }

    #[test]
    fn dropped_branches_are_freed() {
        let mut base = PStack::new(0);
        base.push(1);
        let weak = Rc::downgrade(&base.top);
        {
            let mut br = base.clone();
            br.push(5);
            assert!(br.pop_n(2));
        }
        assert!(weak.upgrade().is_some());
        assert!(base.pop_n(1));
        assert!(weak.upgrade().is_none());
    }
}
