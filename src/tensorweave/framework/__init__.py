"""Graph construction: Graph, Operation, Tensor, scopes, import/export."""
