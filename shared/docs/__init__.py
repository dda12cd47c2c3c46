"""The documentation library behind search_docs (a Bedrock Knowledge Base, optional).

Importing this package loads no AWS SDK: the retriever imports it when opened.
"""

from shared.docs.retriever import DocExcerpt, KnowledgeBaseRetriever, open_retriever

__all__ = ["DocExcerpt", "KnowledgeBaseRetriever", "open_retriever"]
