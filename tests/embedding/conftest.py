from tests.fakes.fixtures import aws_test_credentials, bedrock_runtime, openai_embeddings

__all__ = ["aws_test_credentials", "bedrock_runtime", "openai_embeddings"]
