// A syntax error: the missing semicolon is reported where it is missing, not at the next token.
RWStructuredBuffer<float> Data;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float x = 1.0
    Data[id.x] = x;
}
