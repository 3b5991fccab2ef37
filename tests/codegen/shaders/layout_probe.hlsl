// Copies every value of a constant buffer and a push block, in math order, into a float buffer,
// so a test can check that what the bindings wrote landed where the shader reads it.
struct Item
{
    float3 Color;
    float Weight;
};

cbuffer Probe
{
    float4x4 M;             // column-major storage
    row_major float4x4 R;   // row-major storage
    float3x3 N;             // padded: each stored column is 16 bytes apart
    float4 W[2];
    Item Items[2];
    float3 V;
    uint Count;
};

struct PushData
{
    float2 Scale;
    int Bias;
};
[[vk::push_constant]] PushData Push;

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main()
{
    uint k = 0;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            Out[k++] = M[r][c];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            Out[k++] = R[r][c];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            Out[k++] = N[r][c];
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 4; c++)
            Out[k++] = W[i][c];
    for (int i = 0; i < 2; i++)
    {
        Out[k++] = Items[i].Color.x;
        Out[k++] = Items[i].Color.y;
        Out[k++] = Items[i].Color.z;
        Out[k++] = Items[i].Weight;
    }
    Out[k++] = V.x;
    Out[k++] = V.y;
    Out[k++] = V.z;
    Out[k++] = float(Count);
    Out[k++] = Push.Scale.x;
    Out[k++] = Push.Scale.y;
    Out[k++] = float(Push.Bias);
}
